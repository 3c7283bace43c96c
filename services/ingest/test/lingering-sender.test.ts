import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SafeProducer } from '@sluice/kafka';
import type { TopicMessages } from 'kafkajs';
import { LingeringSender, SendTimeoutError } from '../src/adapters/lingering-sender.ts';

/** A stand-in for SafeProducer.sendBatch whose outcome each test controls. */
function fakeProducer(behaviour: (batch: TopicMessages[]) => Promise<void>) {
  const batches: TopicMessages[][] = [];
  const producer = {
    sendBatch: async (tm: TopicMessages[]) => {
      batches.push(tm);
      await behaviour(tm);
      return [];
    },
  } as unknown as SafeProducer;
  return { producer, batches };
}

const rec = (topic: string, value: string) => ({ topic, message: { key: 'k', value } });

test('records of concurrent callers share one sendBatch, grouped by topic', async () => {
  const { producer, batches } = fakeProducer(async () => {});
  const sender = new LingeringSender(producer, { lingerMs: () => 5 });
  await Promise.all([
    sender.send([rec('events', 'a1'), rec('rejected', 'a2')], 1000),
    sender.send([rec('events', 'b1')], 1000),
    sender.send([rec('events', 'c1')], 1000),
  ]);
  assert.equal(batches.length, 1);
  const byTopic = Object.fromEntries(batches[0]!.map((t) => [t.topic, t.messages.map((m) => m.value)]));
  assert.deepEqual(byTopic, { events: ['a1', 'b1', 'c1'], rejected: ['a2'] });
});

test('a caller resolves only when all its batches are acknowledged', async () => {
  const releases: (() => void)[] = [];
  const { producer, batches } = fakeProducer(() => new Promise<void>((r) => releases.push(r)));
  const sender = new LingeringSender(producer, { lingerMs: () => 1, maxBatchBytes: 200 });
  let done = false;
  const p = sender
    .send([rec('t', 'x'.repeat(100)), rec('t', 'y'.repeat(100)), rec('t', 'z'.repeat(100))], 5000)
    .then(() => (done = true));
  while (releases.length < 3) await new Promise((r) => setTimeout(r, 5));
  assert.equal(batches.length, 3);
  releases[0]!();
  releases[1]!();
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(done, false);
  releases[2]!();
  await p;
  assert.equal(done, true);
});

test('a failed batch fails every caller in it; a stuck one times out', async () => {
  const failing = new LingeringSender(
    fakeProducer(async () => {
      throw new Error('broker down');
    }).producer,
    { lingerMs: () => 1 },
  );
  await assert.rejects(failing.send([rec('t', 'a')], 1000), /broker down/);
  const stuck = new LingeringSender(fakeProducer(() => new Promise<void>(() => {})).producer, {
    lingerMs: () => 1,
    maxInFlight: 1,
  });
  const started = Date.now();
  await assert.rejects(stuck.send([rec('t', 'a')], 100), SendTimeoutError);
  // Queued behind the stuck batch: times out too, and is never sent after giving up.
  await assert.rejects(stuck.send([rec('t', 'b')], 100), SendTimeoutError);
  assert.ok(Date.now() - started < 1000);
});
