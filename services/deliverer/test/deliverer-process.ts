import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PARENT_WATCH_PRELOAD } from '@sluice/service-kit';
import { testBrokers } from '@sluice/testkit';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAIN = 'services/deliverer/src/main.ts';

/** The deliverer as its own process on the test broker (for kill -9), gone with this process too. */
export function startDelivererProcess(configPath: string): ChildProcess {
  return spawn(process.execPath, ['--import', PARENT_WATCH_PRELOAD, MAIN], {
    cwd: ROOT,
    env: {
      ...process.env,
      SLUICE_CONFIG: configPath,
      KAFKA_BROKERS: testBrokers().join(','),
      DELIVERER_PORT: '0',
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
