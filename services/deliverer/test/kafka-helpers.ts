import kafkajs, { type Kafka } from 'kafkajs';
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

/** The partition (of `partitions`) a record keyed `key` lands in, as the producers' default partitioner puts it. */
export function partitionOfKey(key: string, partitions: number): number {
  const partitioner = kafkajs.Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
    partitionId,
    leader: 0,
    partitionErrorCode: 0,
    replicas: [0],
    isr: [0],
  }));
  return partitioner({ topic: 't', partitionMetadata, message: { key, value: null } });
}
