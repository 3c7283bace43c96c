#!/usr/bin/env node
/**
 * sluice-local-schema-registry install   put Apicurio Registry into the cache, start nothing
 * sluice-local-schema-registry start     start one, print its URL, stay up until SIGINT/SIGTERM
 *
 * Run from the repo root: node packages/local-schema-registry/src/cli.ts start
 */
import { installSchemaRegistry, startLocalSchemaRegistry } from './index.ts';

const log = (message: string): void => {
  process.stderr.write(`[local-schema-registry] ${message}\n`);
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'install': {
      const started = Date.now();
      const installation = await installSchemaRegistry({ log });
      log(
        installation.installedNow
          ? `installed in ${((Date.now() - started) / 1000).toFixed(1)} s`
          : `already installed`,
      );
      process.stdout.write(`${installation.dir}\n`);
      return 0;
    }
    case 'start': {
      const portArg = rest.indexOf('--port');
      const port = portArg >= 0 ? Number(rest[portArg + 1]) : undefined;
      if (port !== undefined && !Number.isInteger(port)) throw new Error('--port needs a number');
      const registry = await startLocalSchemaRegistry({
        ...(port !== undefined ? { port } : {}),
        ...(process.env.KAFKA_BROKERS ? { kafkaBrokers: process.env.KAFKA_BROKERS } : {}),
        log,
      });
      process.stdout.write(`${registry.url}\n`);
      // the registry's child handle is unref'd (so library callers can exit): hold the loop open
      const keepAlive = setInterval(() => {}, 1 << 30);
      return await new Promise<number>((resolve) => {
        let stopping = false;
        const shutdown = (signal: NodeJS.Signals): void => {
          if (stopping) return;
          stopping = true;
          log(`${signal}: stopping`);
          registry.stop().then(
            () => {
              clearInterval(keepAlive);
              resolve(0);
            },
            (err: unknown) => {
              log(`stop failed: ${String(err)}`);
              clearInterval(keepAlive);
              resolve(1);
            },
          );
        };
        process.on('SIGINT', shutdown);
        process.on('SIGTERM', shutdown);
        void registry.exited.then(({ code, signal }) => {
          if (stopping) return;
          stopping = true;
          log(`the registry exited on its own (code ${code}, signal ${signal})`);
          registry.stop().finally(() => {
            clearInterval(keepAlive);
            resolve(1);
          });
        });
      });
    }
    default:
      process.stderr.write('usage: cli.ts install | start [--port N]\n');
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
