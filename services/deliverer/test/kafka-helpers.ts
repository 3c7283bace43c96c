import type { Kafka } from 'kafkajs';
import { createJsonCodec } from '@sluice/codec';
import { recordKey, type EventEnvelope } from '@sluice/envelope';

const codec = createJsonCodec();

export async function produceEvents(kafka: Kafka, topic: string, events: EventEnvelope[]): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  const messages = await Promise.all(events.map(async (e) => ({ key: recordKey(e), value: await codec.encode(e) })));
  for (let i = 0; i < messages.length; i += 5_000)
    await producer.send({ topic, messages: messages.slice(i, i + 5_000) });
  await producer.disconnect();
}
