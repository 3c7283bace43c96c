import type { Registry } from 'prom-client';
import {
  ConfigError,
  ConfigStore,
  readEnv,
  requireBrokers,
  requireConfigPath,
  transportWarnings,
  type SluiceEnv,
} from '@sluice/config';
import type { StartupRetry } from '@sluice/kafka';
import { createLogger, type Logger } from '@sluice/logging';
import { type Keyring, KeyringConfigError } from '@sluice/secret-keyring';
import { startTracing, type Tracing, TracingConfigError } from '@sluice/tracing';
import { createMetricsRegistry } from './metrics.ts';
import { runtimeKeyring } from './runtime-keyring.ts';

/** Everything a service's `main.ts` hands to its factory. */
export interface ServiceContext {
  name: string;
  env: SluiceEnv;
  brokers: string[];
  config: ConfigStore;
  logger: Logger;
  registry: Registry;
  /**
   * The service's tracing, from the `OTEL_*` variables (`startTracing`); absent means off. The
   * service lifecycle flushes and shuts it down after every other part has ended.
   */
  tracing?: Tracing;
  /**
   * Set by `runKafkaService` once the brokers answer: the start-up's retry of Kafka's "not yet"
   * answers, and the hand-over of the port from the stand-in probe server. Absent (tests that
   * start a factory themselves): the lifecycle makes its own retry, and nothing holds the port.
   */
  startup?: ServiceStartup;
  /**
   * The runtime destinations' keyring when the config turns them on (`runtimeDestinations`), its
   * keys read at start. Absent (tests that build a context): read when the service starts.
   */
  keyring?: Keyring;
}

/** What a service's start-up shares with the process that runs it (`runKafkaService`). */
export interface ServiceStartup {
  /** The deadline and retry of every start-up Kafka call (`kafka.startupTimeout`). */
  retry: StartupRetry;
  /** Frees `port` of the stand-in probe server, just before the service's own server binds it. */
  releasePort(port: number): Promise<void>;
}

/**
 * Reads the environment and the config file once, at start (and the runtime destinations' keys). A
 * bad value makes the process print one line naming the field and exit 1.
 */
export function loadServiceContext(name: string, rawEnv: NodeJS.ProcessEnv = process.env): ServiceContext {
  try {
    const env = readEnv(rawEnv);
    const logger = createLogger({ name, level: env.logLevel });
    const config = ConfigStore.fromFile(requireConfigPath(env), rawEnv);
    config.on('invalid', (err) =>
      logger.error({ err: err.message }, 'config reload rejected; keeping the previous config'),
    );
    config.on('change', () => logger.info('config reloaded'));
    for (const warning of transportWarnings(config.current)) logger.warn(warning);
    // A key that cannot be loaded refuses the start here, before anything waits for Kafka.
    const keyring = runtimeKeyring(config);
    const tracing = startTracing(name, rawEnv);
    if (tracing.enabled) logger.info({ protocol: tracing.protocol }, 'tracing on: spans exported over OTLP');
    const registry = createMetricsRegistry(name);
    return { name, env, brokers: requireBrokers(env), config, logger, registry, tracing, ...(keyring && { keyring }) };
  } catch (err) {
    if (err instanceof ConfigError || err instanceof KeyringConfigError || err instanceof TracingConfigError) {
      process.stderr.write(`${name}: invalid configuration: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
