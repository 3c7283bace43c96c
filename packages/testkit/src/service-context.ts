import { ConfigStore, readEnv, type SluiceConfig } from '@sluice/config';
import { createLogger } from '@sluice/logging';
import { createMetricsRegistry, type ServiceContext } from '@sluice/service-kit';
import { testBrokers } from './brokers.ts';

/**
 * A `ServiceContext` for running a service in-process in a test: the given config (no file), the
 * test broker, a fresh metrics registry, and quiet logs unless `LOG_LEVEL` says otherwise.
 */
export function testServiceContext(name: string, config: SluiceConfig): ServiceContext {
  const env = readEnv();
  return {
    name,
    env,
    brokers: testBrokers(),
    config: new ConfigStore(undefined, config),
    logger: createLogger({ name, level: process.env.LOG_LEVEL ?? 'warn' }),
    registry: createMetricsRegistry(name),
  };
}
