import { type Kafka, type RetryKafka, readWholeTopic, retryTransient } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { parseStateValue } from './state.ts';
import { DestinationStateView } from './view.ts';

export interface DestinationStateReader {
  view: DestinationStateView;
  /** Resolves once every record written before the reader started has been applied. */
  ready: Promise<void>;
  /** Joined and reading (false while its consumer waits to run again after a Kafka error), for `/readyz`. */
  readonly connected: boolean;
  /**
   * Per partition, the offset after the last record applied to the view (the next one to read):
   * a record written at offset o is in the view once `applied().get(partition) > o`. What
   * `sluice_destination_state_applied_offset` shows, so a caller outside the process can tell
   * that a state it wrote has been seen.
   */
  applied(): ReadonlyMap<number, number>;
  close(): Promise<void>;
}

export interface DestinationStateReaderOptions {
  /** Prefix of the reader's throwaway consumer group; default `sluice.destination-state`. */
  groupPrefix?: string;
  /** How the start's offset read waits out Kafka's "not yet" answers (the service's start-up retry); default 5 s. */
  retry?: RetryKafka;
}

/**
 * Reads `sluice.destination-state` from the beginning and keeps reading it, applying every record
 * to a `DestinationStateView` (latest value per key). Its consumer group is the reader's own (a
 * random id) and never commits: every start reads the whole compacted topic again, so a restart
 * keeps the state, and each replica of each service sees every change within a fetch wait.
 * A record whose value is not a state record is logged and skipped. After a Kafka error the
 * consumer runs again (crash-watch) and reads from the beginning again: applying the same records
 * twice leaves the same latest values.
 */
export async function startDestinationStateReader(
  kafka: Kafka,
  topic: string,
  logger: Logger,
  options: DestinationStateReaderOptions = {},
): Promise<DestinationStateReader> {
  const view = new DestinationStateView();
  const admin = kafka.admin();
  const retry = options.retry ?? ((_operation, call) => retryTransient(call));
  let ends: Awaited<ReturnType<typeof admin.fetchTopicOffsets>>;
  try {
    await retry('connect the destination-state reader', () => admin.connect());
    ends = await retry(`list offsets of ${topic}`, () => admin.fetchTopicOffsets(topic));
  } finally {
    await admin.disconnect();
  }
  /** Per partition, the last offset present at start; the reader is ready once it has read up to each. */
  const remaining = new Map<number, number>();
  for (const p of ends) if (Number(p.high) > Number(p.low)) remaining.set(p.partition, Number(p.high) - 1);
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  if (remaining.size === 0) markReady();

  const applied = new Map<number, number>();
  const group = await readWholeTopic(kafka, {
    topic,
    groupPrefix: options.groupPrefix ?? 'sluice.destination-state',
    logger,
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      for (const m of batch.messages) {
        const key = m.key?.toString('utf8');
        if (key === undefined || key === '') {
          logger.warn({ topic, offset: m.offset }, 'destination state record without a key skipped');
        } else if (m.value === null || m.value.length === 0) {
          view.apply(key, null);
        } else {
          const parsed = parseStateValue(m.value.toString('utf8'));
          if (parsed.ok) view.apply(key, parsed.value);
          else logger.warn({ topic, key, why: parsed.message }, 'destination state record skipped');
        }
        resolveOffset(m.offset);
        applied.set(batch.partition, Number(m.offset) + 1);
      }
      await heartbeat();
      const last = remaining.get(batch.partition);
      // Compaction can remove the last offsets, so "reached" is judged by the batch's end too.
      if (last !== undefined) {
        const end = Number(batch.lastOffset());
        if (end >= last || Number(batch.highWatermark) - 1 <= end) {
          remaining.delete(batch.partition);
          if (remaining.size === 0) markReady();
        }
      }
    },
  });
  return {
    view,
    ready,
    get connected() {
      return group.connected;
    },
    applied: () => applied,
    close: () => group.disconnect(),
  };
}
