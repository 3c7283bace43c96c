import { SafeProducer, type Kafka } from '@sluice/kafka';

/**
 * The raw ceiling of the emission: `count` identify records of the same shape and key as the
 * service's, JSON-encoded per batch and produced straight with kafkajs `sendBatch` through the same
 * producer preset (idempotent, acks = -1) in batches of `batchSize`. Returns records per second.
 */
export async function rawIdentifyCeiling(
  kafka: Kafka,
  topic: string,
  count: number,
  batchSize: number,
  userId: (i: number) => string,
): Promise<{ records: number; ms: number; perSecond: number }> {
  const producer = new SafeProducer(kafka);
  await producer.connect();
  const now = new Date().toISOString();
  const started = performance.now();
  try {
    for (let from = 0; from < count; from += batchSize) {
      const messages = [];
      for (let i = from; i < Math.min(count, from + batchSize); i++) {
        const user = userId(i);
        const envelope = {
          sourceId: 'bench',
          type: 'identify',
          messageId: `00000000-0000-5000-8000-${String(i).padStart(12, '0')}`,
          userId: user,
          traits: { bench_audience: true },
          context: { audience: { name: 'Bench Audience', key: 'bench_audience', syncId: 'raw' } },
          timestamp: now,
          receivedAt: now,
        };
        messages.push({ key: `bench:${user}`, value: JSON.stringify(envelope) });
      }
      await producer.sendBatch([{ topic, messages }]);
    }
  } finally {
    await producer.disconnect();
  }
  const ms = performance.now() - started;
  return { records: count, ms, perSecond: (count * 1000) / ms };
}
