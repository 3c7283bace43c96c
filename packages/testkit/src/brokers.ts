import { readEnv } from '@sluice/config';

/** How long a unit-tier file that reached for the broker lives on after its failure is reported. */
const UNIT_TIER_EXIT_MS = 2_000;

/**
 * The broker every integration test uses: the one `npm test` provisioned, or `KAFKA_BROKERS`.
 * Throws when there is none, as in `npm run test:unit` (which runs without one): a file that needs
 * a broker fails at once there, with the rule it breaks.
 */
export function testBrokers(): string[] {
  const brokers = readEnv().kafkaBrokers;
  if (!brokers) {
    if (process.env.SLUICE_TEST_TIER === 'unit') {
      // The file is misnamed: end its process soon after this failure is reported, whatever it left
      // open (a server, a client), so the unit tier fails at once instead of waiting on it forever.
      setTimeout(() => process.exit(1), UNIT_TIER_EXIT_MS).unref();
      throw new Error(
        'this test needs a Kafka broker, and `npm run test:unit` runs without one: name its file ' +
          '*.integration.test.ts (under test/e2e: *.e2e.test.ts) so that it runs in `npm test` only',
      );
    }
    throw new Error(
      'KAFKA_BROKERS is not set: run integration tests through `npm test`, which provisions a local broker',
    );
  }
  return brokers;
}
