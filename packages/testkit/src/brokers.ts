import { readEnv } from '@sluice/config';

/**
 * The broker every integration test uses: the one `npm test` provisioned, or `KAFKA_BROKERS`.
 * Throws when there is none, as in `npm run test:unit` (which runs without one): a file that needs
 * a broker fails at once there, with the rule it breaks.
 */
export function testBrokers(): string[] {
  const brokers = readEnv().kafkaBrokers;
  if (!brokers) {
    if (process.env.SLUICE_TEST_TIER === 'unit')
      throw new Error(
        'this test needs a Kafka broker, and `npm run test:unit` runs without one: name its file ' +
          '*.integration.test.ts (under test/e2e: *.e2e.test.ts) so that it runs in `npm test` only',
      );
    throw new Error(
      'KAFKA_BROKERS is not set: run integration tests through `npm test`, which provisions a local broker',
    );
  }
  return brokers;
}
