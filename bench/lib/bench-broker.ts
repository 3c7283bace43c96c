/**
 * The broker a benchmark runs against: `KAFKA_BROKERS` if set, else a local broker started for
 * the run (and `KAFKA_BROKERS` set to it, since testServiceContext reads the broker from the
 * environment). `stop` removes a broker started here and leaves a given one alone.
 */
export async function benchBroker(): Promise<{ list: string[]; stop: () => Promise<void> }> {
  if (process.env.KAFKA_BROKERS) return { list: process.env.KAFKA_BROKERS.split(','), stop: async () => undefined };
  const { startLocalKafka } = await import('@sluice/local-kafka');
  const kafka = await startLocalKafka();
  process.env.KAFKA_BROKERS = kafka.brokers;
  return { list: kafka.brokers.split(','), stop: () => kafka.dispose() };
}
