import type { Kafka } from '@sluice/kafka';
import { uniqueName, waitUntil } from '@sluice/testkit';

/** One key's records on a waiting topic, by their place in its queue (`sluice-ordering` header's `seq`). */
export interface WaitingCensus {
  records: number;
  /** Records with no readable place. */
  unplaced: number;
  /** Per place, how many records carry it (copies pile up as records go round). */
  places: Map<number, number>;
  /** Per place, the partition and offsets of its records. */
  offsets: Map<number, { partition: number; offsets: number[] }>;
  /** The group's committed offset per partition (below it every record is done with), when a group was named. */
  committed: Map<number, number>;
}

/**
 * Reads a waiting topic from its start to the end offsets it has when called, and counts one key's
 * records by place: where a stuck queue's front record is (there, copied, or missing). A failed
 * drill calls it; it reads raw and keeps only counts.
 */
export async function waitingCensus(
  kafka: Kafka,
  of: { topic: string; key: string; groupId?: string },
  timeoutMs: number,
): Promise<WaitingCensus> {
  const { topic, key } = of;
  const census: WaitingCensus = {
    records: 0,
    unplaced: 0,
    places: new Map(),
    offsets: new Map(),
    committed: new Map(),
  };
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  if (of.groupId !== undefined) {
    const groupAdmin = kafka.admin();
    await groupAdmin.connect();
    const [committed] = await groupAdmin
      .fetchOffsets({ groupId: of.groupId, topics: [topic] })
      .finally(() => groupAdmin.disconnect());
    for (const p of committed?.partitions ?? []) census.committed.set(p.partition, Number(p.offset));
  }
  const readTo = new Map<number, number>();
  const consumer = kafka.consumer({ groupId: uniqueName('census'), maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch, resolveOffset }) => {
        for (const m of batch.messages) {
          if (m.key?.toString('utf8') === key) {
            census.records++;
            const seq = placeOf(m.headers?.['sluice-ordering']);
            if (seq === undefined) census.unplaced++;
            else {
              census.places.set(seq, (census.places.get(seq) ?? 0) + 1);
              const at = census.offsets.get(seq) ?? { partition: batch.partition, offsets: [] };
              at.offsets.push(Number(m.offset));
              census.offsets.set(seq, at);
            }
          }
          resolveOffset(m.offset);
        }
        readTo.set(batch.partition, Math.max(readTo.get(batch.partition) ?? 0, Number(batch.lastOffset()) + 1));
      },
    });
    await waitUntil(
      () => ends.every((e) => Number(e.high) <= Number(e.low) || (readTo.get(e.partition) ?? 0) >= Number(e.high)),
      timeoutMs,
      `the census of ${topic} to reach its end offsets`,
    );
  } finally {
    await consumer.disconnect();
  }
  return census;
}

function placeOf(header: Buffer | string | (Buffer | string)[] | undefined): number | undefined {
  const raw = Array.isArray(header) ? header[0] : header;
  if (raw === undefined) return undefined;
  try {
    const { seq } = JSON.parse(raw.toString()) as { seq?: unknown };
    return typeof seq === 'number' ? seq : undefined;
  } catch {
    return undefined;
  }
}

/** One line: how many records, the places held, and which places of `[first, next)` have no record. */
export function formatCensus(census: WaitingCensus, queue: { first?: number; next?: number } | undefined): string {
  const places = [...census.places.keys()].sort((a, b) => a - b);
  const line = `${census.records} records (${census.unplaced} unplaced), ${places.length} places from ${places[0]} to ${places.at(-1)}`;
  if (queue?.first === undefined || queue.next === undefined) return line;
  const missing: number[] = [];
  for (let seq = queue.first; seq < queue.next && missing.length < 20; seq++)
    if (!census.places.has(seq)) missing.push(seq);
  const front = census.offsets.get(queue.first);
  const where = front
    ? ` at partition ${front.partition} offsets ${front.offsets.join(',')} (the group committed ${census.committed.get(front.partition) ?? '?'})`
    : '';
  return `${line}; queue [${queue.first}, ${queue.next}): front ${queue.first} has ${census.places.get(queue.first) ?? 0} copies${where}; missing places: ${missing.join(',') || 'none'}`;
}
