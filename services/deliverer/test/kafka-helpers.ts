import type { Kafka } from 'kafkajs';
import { createJsonCodec } from '@sluice/codec';
import { recordKey, type EventEnvelope } from '@sluice/envelope';
import { uniqueName, type TopicRecord } from '@sluice/testkit';

/** Collects every record of some topics while a test runs (one consumer, joined once). */
export async function collectTopics(kafka: Kafka, topics: string[]) {
  const consumer = kafka.consumer({ groupId: uniqueName('collector'), maxWaitTimeInMs: 50 });
  const seen = new Map<string, TopicRecord[]>(topics.map((t) => [t, []]));
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic, partition, message }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {}))
        if (v !== undefined) headers[k] = String(Array.isArray(v) ? v[0] : v);
      seen.get(topic)!.push({
        partition,
        offset: message.offset,
        key: message.key?.toString() ?? null,
        value: message.value,
        headers,
      });
    },
  });
  return { records: (topic: string) => seen.get(topic)!, stop: () => consumer.disconnect() };
}

const codec = createJsonCodec();

export async function produceEvents(kafka: Kafka, topic: string, events: EventEnvelope[]): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  const messages = await Promise.all(events.map(async (e) => ({ key: recordKey(e), value: await codec.encode(e) })));
  for (let i = 0; i < messages.length; i += 5_000)
    await producer.send({ topic, messages: messages.slice(i, i + 5_000) });
  await producer.disconnect();
}
