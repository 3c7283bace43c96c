import { readEnv } from '@sluice/config';

/** The broker every integration test uses: the one `npm test` provisioned, or `KAFKA_BROKERS`. */
export function testBrokers(): string[] {
  const brokers = readEnv().kafkaBrokers;
  if (!brokers) {
    throw new Error(
      'KAFKA_BROKERS is not set: run integration tests through `npm test`, which provisions a local broker',
    );
  }
  return brokers;
}
