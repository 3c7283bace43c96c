import type { SluiceConfig } from '@sluice/config';
import { createKafka, ensureTopics, type Kafka, type KafkaClientOptions } from '@sluice/kafka';
import { createLogger, type Logger } from '@sluice/logging';
import { topicSpecs } from '@sluice/topology';
import { testBrokers } from './brokers.ts';
import { uniqueName } from './names.ts';

/** Where a test's Kafka client connects and how it logs; each field defaults to the test broker's. */
export interface TestKafkaOptions {
  /** Default: a unique `test-…` client id. */
  clientId?: string;
  /** Default: `testBrokers()`, the broker `npm test` provisioned or `KAFKA_BROKERS`. */
  brokers?: string[];
  /** Default: quiet (`LOG_LEVEL`, else `warn`). */
  logger?: Logger;
  /** Default: plaintext. */
  security?: KafkaClientOptions['security'];
}

/**
 * The Kafka client a test reads and writes with: the services' own client factory on the test
 * broker. Throws at once (no connection attempt) when no broker is named, so a file that needs
 * one fails clearly in `npm run test:unit`.
 */
export function testKafka(options: TestKafkaOptions = {}): Kafka {
  return createKafka({
    brokers: options.brokers ?? testBrokers(),
    clientId: options.clientId ?? uniqueName('test'),
    logger: options.logger ?? createLogger({ name: 'test', level: process.env.LOG_LEVEL ?? 'warn' }),
    ...(options.security ? { security: options.security } : {}),
  });
}

/** Creates every topic of `config` (as the services do at start) and waits for their leaders. */
export async function createTestTopics(kafka: Kafka, config: SluiceConfig): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await ensureTopics(admin, topicSpecs(config)).finally(() => admin.disconnect());
}
