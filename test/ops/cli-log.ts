import { randomBytes } from 'node:crypto';
import { runCli } from '@sluice/cli';
import { createDeliveryLog, type DeliveryLogService } from '@sluice/delivery-log';
import { testConfig, testServiceContext } from '@sluice/testkit';
import { memoryIo } from './cli-io.ts';

/** The admin token of the delivery log a CLI test starts. */
const TOKEN = 'cli-test-admin-token-of-32-characters-or-more';

/** A delivery log for the CLI to call, and the CLI run in-process against it with the admin token. */
export interface CliLog {
  log: DeliveryLogService;
  cli: (...args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;
}

/**
 * Starts a real in-process delivery log on the test broker with `raw` as its config, the admin
 * token and runtime destinations on (a keyring key of its own in `keyVariable`), for the CLI's
 * commands that go through the API.
 */
export async function startCliLog(raw: Record<string, unknown>, keyVariable: string): Promise<CliLog> {
  process.env[keyVariable] = randomBytes(32).toString('hex');
  const config = testConfig({
    ...raw,
    deliveryLog: { adminToken: TOKEN },
    runtimeDestinations: { keyring: [{ id: 'k1', key: { env: keyVariable } }] },
  });
  const log = await createDeliveryLog(testServiceContext('delivery-log', config), { port: 0 }).start();
  const env = { SLUICE_API_URL: `http://127.0.0.1:${log.port}/`, SLUICE_API_TOKEN: TOKEN };
  const cli = async (...args: string[]) => {
    const io = memoryIo('', env);
    const code = await runCli(args, io.io);
    return { code, stdout: io.stdout(), stderr: io.stderr() };
  };
  return { log, cli };
}
