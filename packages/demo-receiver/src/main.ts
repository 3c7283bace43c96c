// The demo receiver on its own: `npm start -w @sluice/demo-receiver [-- --host 0.0.0.0]`.
// Port, path and secret come from the config in use (SLUICE_CONFIG, else the bundled demo config);
// flags override them.
import { parseArgs } from 'node:util';
import { DEMO_CONFIG_PATH, loadConfigFile, readEnv } from '@sluice/config';
import { findDemoTarget } from './demo-target.ts';
import { startDemoReceiver } from './receiver.ts';

const { values } = parseArgs({
  options: {
    config: { type: 'string' },
    host: { type: 'string' },
    port: { type: 'string' },
    path: { type: 'string' },
    secret: { type: 'string' },
  },
});
const configPath = values.config ?? readEnv(process.env).configPath ?? DEMO_CONFIG_PATH;
const target = findDemoTarget(loadConfigFile(configPath, process.env));
const secret = values.secret ?? target?.secret;
const receiver = await startDemoReceiver({
  ...(values.host !== undefined && { host: values.host }),
  port: values.port !== undefined ? Number(values.port) : (target?.port ?? undefined),
  ...((values.path ?? target?.path) !== undefined && { path: values.path ?? target?.path }),
  ...(secret !== undefined && { secret }),
});
process.stdout.write(
  `demo receiver listening on ${receiver.url} (signatures ${secret ? 'checked' : 'not checked: no secret'})\n`,
);
const stop = () => void receiver.close().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
