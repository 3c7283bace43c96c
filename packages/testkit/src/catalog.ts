import type { SluiceConfig } from '@sluice/config';
import { type CatalogReader, CatalogWriter, startCatalogReader } from '@sluice/destination-catalog';
import { type Kafka, SafeProducer, StartupRetry } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { type Keyring, loadKeyring } from '@sluice/secret-keyring';

/** A test's own reader and writer of the runtime catalog, as the delivery log's API holds them. */
export interface TestCatalog {
  /** Read to the topic's end, and followed: `appliedOffset` is what a service must have read too. */
  reader: CatalogReader;
  writer: CatalogWriter;
  /** The writer's producer, for records written past its checks. */
  producer: SafeProducer;
  keyring: Keyring;
  close(): Promise<void>;
}

/**
 * The catalog of `config` (`runtimeDestinations` on; docs/reference/runtime-destinations.md) read to
 * its end, with a `CatalogWriter` over it whose changes are checked against `config` as the file.
 */
export async function startTestCatalog(kafka: Kafka, config: SluiceConfig): Promise<TestCatalog> {
  const keyring = loadKeyring(config.runtimeDestinations!.keyring);
  const topic = config.kafka.topics.destinations;
  const reader = await startCatalogReader({
    kafka,
    topic,
    keyring,
    logger: createLogger({ name: 'test-catalog', level: process.env.LOG_LEVEL ?? 'warn' }),
    retry: new StartupRetry({ timeoutMs: 60_000 }).run,
  });
  await reader.ready;
  const producer = new SafeProducer(kafka);
  await producer.connect();
  const writer = new CatalogWriter({
    reader,
    producer,
    topic,
    context: () => ({ file: { path: 'test', config }, keyring }),
  });
  return {
    reader,
    writer,
    producer,
    keyring,
    close: async () => {
      await reader.close();
      await producer.disconnect();
    },
  };
}
