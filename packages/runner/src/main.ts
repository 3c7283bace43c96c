// `npm start`: the whole pipeline in one terminal (docs/reference/operating-interface.md). Wiring and signals only.
import { ConfigError } from '@sluice/config';
import { createPipeline } from './pipeline.ts';

const print = (line: string) => process.stdout.write(`${line}\n`);
const pipeline = createPipeline({ env: process.env, print });

let signals = 0;
const onSignal = (signal: NodeJS.Signals) => {
  signals += 1;
  if (signals > 1) {
    print(`${signal} again: killing the services.`);
    pipeline.kill();
    return;
  }
  print(`${signal}: shutting down (Ctrl-C again to kill).`);
  void pipeline.stop().then(() => process.exit(0));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

void pipeline.failure.then(async (reason) => {
  print(`${reason}; shutting everything down.`);
  await pipeline.stop();
  process.exit(1);
});

try {
  await pipeline.start();
} catch (err) {
  if (signals === 0) {
    print(
      err instanceof ConfigError
        ? `Invalid configuration: ${err.message}`
        : `Start-up failed: ${(err as Error).message}`,
    );
    await pipeline.stop();
    process.exit(1);
  }
}
