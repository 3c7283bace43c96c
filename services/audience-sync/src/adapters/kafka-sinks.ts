import type { EnvelopeCodec } from '@sluice/codec';
import type { ConfigStore } from '@sluice/config';
import { recordKey, rejectedRecord } from '@sluice/envelope';
import type { SafeProducer } from '@sluice/kafka';
import type { EventSink, RejectSink, StateSink } from '../sync-processor.ts';

/** The three topics audience-sync writes, through the one safe producer (acks = -1). Topic names are read per send, so reloads apply. */
export function createKafkaSinks(
  producer: SafeProducer,
  codec: EnvelopeCodec,
  config: ConfigStore,
): { events: EventSink; state: StateSink; rejects: RejectSink } {
  const topics = () => config.current.kafka.topics;
  return {
    events: {
      async emit(events) {
        const messages = await Promise.all(
          events.map(async (e) => ({ key: recordKey(e), value: await codec.encode(e) })),
        );
        await producer.send(topics().events, messages);
      },
    },
    state: {
      async write(records) {
        await producer.send(
          topics().audienceState,
          records.map((r) => ({ key: r.key, value: r.value })),
        );
      },
    },
    rejects: {
      async reject(input) {
        await producer.send(topics().rejected, [rejectedRecord(input)]);
      },
    },
  };
}
