import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EventEnvelope } from '@sluice/envelope';
import { createLogger } from '@sluice/logging';
import { Registry } from 'prom-client';
import { createSnapshotCodec } from '@sluice/codec';
import { createSnapshotReader } from '../src/adapters/snapshot-reader.ts';
import { createMetrics } from '../src/metrics.ts';
import { SyncProcessor, type SnapshotRecord } from '../src/sync-processor.ts';
import type { RawStateRecord } from '../src/domain/state-records.ts';

function processor() {
  const emitted: EventEnvelope[] = [];
  const state: RawStateRecord[] = [];
  const p = new SyncProcessor({
    events: { emit: async (e) => void emitted.push(...e) },
    state: { write: async (r) => void state.push(...r) },
    rejects: { reject: async () => assert.fail('nothing is rejected here') },
    metrics: createMetrics(new Registry()),
    logger: createLogger({ name: 'test', level: 'silent' }),
    isKnownSource: () => true,
    readSnapshot: createSnapshotReader(createSnapshotCodec({ topic: 'audiences' })),
    batchSize: 2,
    now: () => Date.parse('2026-11-21T23:34:15.123Z'),
  });
  return { p, emitted, state };
}

const record = (offset: number, body: unknown): SnapshotRecord => {
  const value = Buffer.from(JSON.stringify(body));
  return { topic: 'sluice.audiences', partition: 4, offset, key: Buffer.from('web:A'), value };
};

test('the sync marker holds only { syncId, partition, offset } of the final chunk, never the chunk itself', async () => {
  const { p, emitted, state } = processor();
  // A large chunk: a marker that carried the record would carry these bytes (and exceed a Kafka record).
  const members = Array.from({ length: 5_000 }, (_, i) => `user-${i}`);
  await p.handle(
    record(7, { sourceId: 'web', audience: 'A', syncId: 's1', members: members.slice(0, 2_500), final: false }),
    async () => {},
  );
  assert.equal(p.heldOffset(4), 7, 'commits are held at the first chunk of the unfinished sync');
  await p.handle(
    record(8, { sourceId: 'web', audience: 'A', syncId: 's1', members: members.slice(2_500), final: true }),
    async () => {},
  );
  assert.equal(emitted.length, 5_000);
  const marker = state.at(-1)!;
  assert.equal(marker.key, 's\u0000audience\u0000web\u0000A');
  assert.deepEqual(JSON.parse(marker.value!), { syncId: 's1', partition: 4, offset: 8 });
  assert.equal(p.heldOffset(4), undefined);
  // A replay of the final chunk (at or before the marker) is ignored.
  await p.handle(record(8, { sourceId: 'web', audience: 'A', syncId: 's1', members: [], final: true }), async () => {});
  assert.equal(emitted.length, 5_000);
});
