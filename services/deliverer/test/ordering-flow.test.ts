import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Destination, SluiceConfig } from '@sluice/config';
import type { Admin, ConsumedRecord, Kafka, RecordSink, RecordSlot } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { testConfig, waitUntil } from '@sluice/testkit';
import { waitingTopicName } from '@sluice/topology';
import type { Message } from 'kafkajs';
import { Registry } from 'prom-client';
import type { DeliveryJob } from '../src/intake/delivery-job.ts';
import { unparkJob } from '../src/parking/parked-job.ts';
import { DelivererMetrics } from '../src/service/metrics.ts';
import type { AttemptStep } from '../src/attempt/attempt-step.ts';
import { Ordering, type OrderedTurn, type OrderingDeps } from '../src/ordering/ordering.ts';
import { OrderingStore } from '../src/ordering/ordering-store.ts';
import {
  PARK_TAIL_MAX,
  parked,
  QUEUE_STATE_MAX_BYTES,
  type QueueState,
  type StepOutcome,
} from '../src/ordering/queue-rules.ts';
import { decodeStateRecord, QueueStates } from '../src/ordering/queue-states.ts';
import { ORDERING_HEADER } from '../src/service/constants.ts';

// The real Ordering over the real OrderingStore and its in-memory states, with a recording sink in
// place of Kafka (docs/reference/ordering.md). Records are handed to it as the consumer does: in
// partition order, at most `SLOTS` in flight per partition.

const SLOTS = 128;
const PARTITION = 0;

/** A live turn of `job` at `destination` in the test's partition, accepted at 1. */
const turn = (job: DeliveryJob, destination: Destination, slot?: RecordSlot): OrderedTurn => ({
  job,
  destination,
  acceptedAt: 1,
  source: 'live',
  partition: PARTITION,
  ...(slot && { slot }),
});

const config: SluiceConfig = testConfig({
  sources: [{ id: 's', writeKeys: ['k'] }],
  destinations: [
    { id: 'ord', type: 'webhooks', ordering: 'per-user', settings: { webhooks: [{ url: 'https://a.example/h' }] } },
    { id: 'plain', type: 'webhooks', settings: { webhooks: [{ url: 'https://b.example/h' }] } },
  ],
});
const ord = config.destinations.find((d) => d.id === 'ord')!;
const plain = config.destinations.find((d) => d.id === 'plain')!;

interface Rig {
  ordering: Ordering;
  states: QueueStates;
  metrics: DelivererMetrics;
  sent: { topic: string; message: Message }[];
  dead: { job: DeliveryJob; lastError: string }[];
  /** Another Ordering over the same store (a restart; other limits). */
  another: (extra?: Partial<OrderingDeps>) => Ordering;
}

/** An OrderingStore over `states` writing through `sink`; nothing on the state topic: a partition is this process's at once. */
const storeOver = (states: QueueStates, sink: RecordSink): OrderingStore =>
  new OrderingStore({
    kafka: {} as Kafka,
    admin: { fetchTopicOffsets: async () => [] } as unknown as Admin,
    sink,
    topic: () => config.kafka.topics.ordering,
    logger: createLogger({ name: 'test', level: 'silent' }),
    groupPrefix: 'test',
    states,
  });

function rig(budgetBytes = 64 * 1024 * 1024, kafka: { writeMs: number } = { writeMs: 0 }): Rig {
  const sent: Rig['sent'] = [];
  const dead: Rig['dead'] = [];
  // `writeMs`: how long Kafka takes to acknowledge a write (each write of a record going round waits for it).
  const sink: RecordSink = {
    send: async (topic, message) => {
      if (kafka.writeMs > 0) await new Promise((resolve) => setTimeout(resolve, kafka.writeMs));
      sent.push({ topic, message });
    },
  };
  const logger = createLogger({ name: 'test', level: 'silent' });
  const states = new QueueStates(budgetBytes);
  const metrics = new DelivererMetrics(new Registry());
  const store = storeOver(states, sink);
  const deps: OrderingDeps = {
    config: () => config,
    // The waiting topic exists: no Kafka here to create it on.
    waitingTopics: { ensure: async (id) => waitingTopicName(config, id) },
    sink,
    store,
    deadLetter: async (job, { lastError }) => void dead.push({ job, lastError }),
    metrics,
    logger,
    now: Date.now,
  };
  const another = (extra: Partial<OrderingDeps> = {}) => new Ordering({ ...deps, ...extra });
  return { ordering: another(), states, metrics, sent, dead, another };
}

const job = (user: string, messageId: string, destination: Destination = ord, body = '{}'): DeliveryJob => ({
  key: `s:${user}`,
  body: Buffer.from(body),
  messageId,
  sourceId: 's',
  destinationId: destination.id,
  eventType: 'track',
  endpoints: destination.endpoints.map((e) => e.ref),
});

/**
 * At most `n` handlers at once, handed out in order (the consumer's slots of one partition); a
 * handler may give its slot back before it ends (`RecordSlot`).
 */
function slots(n: number) {
  let free = n;
  const queue: (() => void)[] = [];
  return (work: (slot: RecordSlot) => Promise<void>): Promise<void> => {
    const run = async () => {
      let given = false;
      const slot = {
        release: () => {
          if (given) return;
          given = true;
          free++;
          queue.shift()?.();
        },
      };
      try {
        await work(slot);
      } finally {
        slot.release();
      }
    };
    if (free > 0 && queue.length === 0) {
      free--;
      return run();
    }
    return new Promise<void>((resolve, reject) =>
      queue.push(() => {
        free--;
        run().then(resolve, reject);
      }),
    );
  };
}

/** The records written to a topic, as the consumer would hand them out again. */
const readBack = (r: Rig, topic: string): ConsumedRecord[] =>
  r.sent
    .filter((s) => s.topic === topic)
    .map(
      (s, i) =>
        ({
          topic,
          partition: PARTITION,
          offset: String(i),
          key: Buffer.from(String(s.message.key)),
          value: s.message.value === null ? null : Buffer.from(s.message.value as string | Buffer),
          headers: s.message.headers ?? {},
          timestamp: String(Date.now()),
        }) as unknown as ConsumedRecord,
    );

const unparkedId = (record: ConsumedRecord): string => {
  const unparked = unparkJob({ key: String(record.key), body: record.value!, headers: record.headers }, Date.now());
  assert.ok(unparked.ok);
  return unparked.job.messageId;
};

/** The retry state of a head's due retry. */
const retryOf = (messageId: string): NonNullable<DeliveryJob['previous']> => ({
  messageId,
  sourceId: 's',
  destinationId: 'ord',
  eventType: 'track',
  endpoints: ord.endpoints.map((e) => e.ref),
  firstAttemptAt: Date.now(),
  attempts: 1,
  history: [],
});

/** Where a queue stands: its head, its places and its bytes. */
const place = (q: QueueState | undefined) => q && { head: q.head, first: q.first, next: q.next, bytes: q.bytes };

const stateWrites = (r: Rig) => r.sent.filter((s) => s.topic === config.kafka.topics.ordering);

describe('per-user order with the real Ordering', () => {
  it("a burst of one user's events behind its attempt in flight holds back neither another user nor an unordered destination of the same partition", async () => {
    const r = rig();
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const attempted: string[] = [];
    const attempt: AttemptStep = async ({ job: j }): Promise<StepOutcome> => {
      attempted.push(j.messageId);
      if (j.messageId === 'a-0') await gate; // the slow receiver: an attempt in flight
      return 'delivered';
    };
    const handle = slots(SLOTS);
    const burst = Array.from({ length: 300 }, (_, i) => `a-${i}`);
    const handled = [
      ...burst.map((id) => handle((slot) => r.ordering.step(turn(job('a', id), ord, slot), attempt))),
      handle((slot) => r.ordering.step(turn(job('b', 'b-0'), ord, slot), attempt)),
      handle((slot) => r.ordering.step(turn(job('a', 'p-0', plain), plain, slot), attempt)),
    ];
    // While a-0 is still in flight: user b and the unordered destination went out; a's burst waited
    // in memory up to its bound, then was parked (those in memory first, in order).
    await waitUntil(() => attempted.includes('b-0') && attempted.includes('p-0'), 5_000, 'b-0 and p-0 attempted');
    const waitingTopic = waitingTopicName(config, 'ord');
    await waitUntil(() => readBack(r, waitingTopic).length >= 299, 5_000, "a's burst parked");
    assert.deepEqual(
      attempted.filter((id) => id.startsWith('a-')),
      ['a-0'],
      'nothing of a overtook its attempt in flight',
    );
    assert.equal(readBack(r, waitingTopic).length, 299);
    // A waiting record read while a-0 is in flight is not its turn.
    const [first] = readBack(r, waitingTopic);
    const early = r.ordering.onWaiting(first!, attempt);
    openGate();
    await Promise.all(handled);
    await early;
    for (const record of readBack(r, waitingTopic).slice(1)) await r.ordering.onWaiting(record, attempt);
    // Copies written again at the tail (the early read) come round too, and are dropped.
    for (const record of readBack(r, waitingTopic).slice(299)) await r.ordering.onWaiting(record, attempt);
    assert.deepEqual(
      attempted.filter((id) => id.startsWith('a-')),
      burst,
      'a in acceptance order, each once',
    );
    assert.equal(r.states.size, 0, 'the queue is gone');
  });

  it("a user's burst behind its attempt in flight waits in memory, slots given back: in order, none through the waiting topic", async () => {
    const r = rig();
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const attempted: string[] = [];
    const attempt: AttemptStep = async ({ job: j }): Promise<StepOutcome> => {
      attempted.push(j.messageId);
      if (j.messageId === 'b-0') await gate;
      return 'delivered';
    };
    const handle = slots(2);
    const burst = Array.from({ length: 10 }, (_, i) => `b-${i}`);
    const handled = [
      ...burst.map((id) => handle((slot) => r.ordering.step(turn(job('b', id), ord, slot), attempt))),
      handle((slot) => r.ordering.step(turn(job('c', 'c-0'), ord, slot), attempt)),
    ];
    // Two slots: c-0 gets one only because b's waiting events gave theirs back.
    await waitUntil(() => attempted.includes('c-0'), 5_000, 'c-0 attempted while b-0 is in flight');
    assert.deepEqual(attempted, ['b-0', 'c-0']);
    assert.equal((await r.metrics.orderingHeldBytes.get()).values[0]?.value, 9 * 2, 'nine bodies of 2 bytes in memory');
    openGate();
    await Promise.all(handled);
    assert.deepEqual(
      attempted.filter((id) => id.startsWith('b-')),
      burst,
    );
    assert.equal(r.sent.length, 0, 'no state record, no waiting record');
    assert.equal((await r.metrics.orderingHeldBytes.get()).values[0]?.value, 0);
  });

  it('the events in memory behind an attempt that ends retrying, or past the bound, are parked behind it in order', async () => {
    for (const bound of ['retrying', 'bound'] as const) {
      const r = rig();
      const ordering = bound === 'bound' ? r.another({ maxHeld: 3 }) : r.ordering;
      let openGate!: () => void;
      const gate = new Promise<void>((resolve) => (openGate = resolve));
      const attempt: AttemptStep = async ({ job: j }) => {
        if (j.messageId !== 'x-0') return 'delivered';
        await gate;
        return 'retrying';
      };
      const handled = Array.from({ length: 5 }, (_, i) => ordering.step(turn(job('x', `x-${i}`), ord), attempt));
      const waitingTopic = waitingTopicName(config, 'ord');
      if (bound === 'bound') {
        // x-4 is past the bound of 3: x-1..x-3 are parked first, then x-4, behind x-0 in flight.
        await Promise.all(handled.slice(1));
        assert.equal(r.states.get('ord', 's:x')?.head, 'x-0');
      }
      openGate();
      await Promise.all(handled);
      const parkedIds = readBack(r, waitingTopic).map((rec) => JSON.parse(String(rec.headers['sluice-ordering'])).seq);
      assert.deepEqual(parkedIds, [0, 1, 2, 3], `${bound}: four waiting records, numbered in order`);
      const ids = readBack(r, waitingTopic).map((rec) => unparkedId(rec));
      assert.deepEqual(ids, ['x-1', 'x-2', 'x-3', 'x-4'], bound);
      assert.equal(r.states.get('ord', 's:x')?.head, 'x-0', `${bound}: x-0 is the head`);
      const waited = (await r.metrics.orderingWaiting.get()).values.find((v) => v.labels.destination === 'ord');
      assert.equal(waited?.value, 4);
    }
  });

  it('5,000 waiting events with 128-character ids full of quotes and backslashes: each park writes a state record of the same few hundred bytes', async () => {
    const r = rig();
    const hostile = (i: number) => `${i}-`.padEnd(128, '"\\');
    const attempt: AttemptStep = async ({ job: j }) => (j.messageId === hostile(0) ? 'retrying' : 'delivered');
    await r.ordering.step(turn(job('h', hostile(0)), ord), attempt);
    const before = stateWrites(r).length;
    const N = 5_000;
    for (let i = 1; i <= N; i++) await r.ordering.step(turn(job('h', hostile(i)), ord), attempt);
    const writes = stateWrites(r).slice(before);
    assert.equal(writes.length, N, 'one state write per park');
    const sizes = writes.map((w) => Buffer.byteLength(w.message.value as string));
    const largest = Math.max(...sizes);
    assert.ok(largest <= QUEUE_STATE_MAX_BYTES, `largest state record ${largest} B ≤ ${QUEUE_STATE_MAX_BYTES} B`);
    // O(1) per park: the last park writes what the tenth did, up to the digits of the counters.
    assert.ok(sizes.at(-1)! - sizes[9]! <= 16, `park 10: ${sizes[9]} B, park ${N}: ${sizes.at(-1)} B`);
    const total = sizes.reduce((a, b) => a + b, 0);
    console.log(`${N} parks of hostile ids: ${total} B written to the state topic, largest record ${largest} B`);
    assert.ok(r.states.bytes < 2_000, `memory held for the queue: ${r.states.bytes} B`);
  });

  it("one state record per queue on its way to Kafka: the queue's puts made meanwhile leave as one record, the newest, once it is acknowledged", async () => {
    const sent: Message[] = [];
    const acks: (() => void)[] = [];
    const sink: RecordSink = {
      send: (_topic, message) => {
        sent.push(message);
        return new Promise<void>((resolve) => acks.push(resolve));
      },
    };
    const store = storeOver(new QueueStates(1 << 20), sink);
    const at = { destinationId: 'ord', key: 's:burst', partition: PARTITION };
    const other = { ...at, key: 's:other' };
    let q: QueueState | undefined;
    const park = (queue: typeof at) => {
      q = parked(store.get(queue.destinationId, queue.key), {
        messageId: `m-${sent.length}-${Math.random()}`,
        bytes: 1,
        epoch: 'e1',
      }).state;
      return store.put(queue, q);
    };
    const first = park(at);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(sent.length, 1, 'the first put leaves at the next turn');
    let settled = 0;
    const later = Array.from({ length: 200 }, () => park(at).then(() => settled++));
    const another = park(other);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(
      sent.length,
      2,
      "another queue's record does not wait; this queue's 200 puts wait for its record on its way",
    );
    assert.equal(String(sent[1]!.key), 'ord/s:other');
    acks.shift()!();
    await first;
    await waitUntil(() => sent.length >= 3, 1_000, 'the next record of the queue');
    assert.equal(sent.length, 3, 'once acknowledged, the 200 puts leave as one record');
    assert.equal(settled, 0, 'none of them resolves before its record is acknowledged');
    const newest = decodeStateRecord('ord/s:burst', Buffer.from(sent[2]!.value as string));
    assert.equal(newest.kind, 'queue');
    assert.equal(newest.kind === 'queue' && newest.state?.next, store.get('ord', 's:burst')!.next, 'the newest state');
    for (const ack of acks.splice(0)) ack();
    await Promise.all([...later, another]);
    assert.equal(settled, 200);
  });

  it("a held user's burst (its head in the retry path) holds back neither another user nor an unordered destination: parks leave their slots, and share state records", async () => {
    const r = rig();
    // Kafka answers each write after 5 ms: a park's state record, then its waiting record.
    const slowSink: RecordSink = {
      send: async (topic, message) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        r.sent.push({ topic, message });
      },
    };
    const ordering = r.another({ sink: slowSink, store: storeOver(r.states, slowSink) });
    const attempted: string[] = [];
    const attempt: AttemptStep = async ({ job: j }): Promise<StepOutcome> => {
      attempted.push(j.messageId);
      return j.messageId === 'h-0' ? 'retrying' : 'delivered';
    };
    await ordering.step(turn(job('h', 'h-0'), ord), attempt);
    const handle = slots(SLOTS);
    const N = 1_000;
    const waitingTopic = waitingTopicName(config, 'ord');
    let parkedWhenOthersWent = -1;
    const others: AttemptStep = async (t) => {
      if (parkedWhenOthersWent < 0) parkedWhenOthersWent = readBack(r, waitingTopic).length;
      return attempt(t);
    };
    const handled = [
      ...Array.from({ length: N }, (_, i) =>
        handle((slot) => ordering.step(turn(job('h', `h-${i + 1}`), ord, slot), attempt)),
      ),
      handle((slot) => ordering.step(turn(job('b', 'b-0'), ord, slot), others)),
      handle((slot) => ordering.step(turn(job('h', 'p-0', plain), plain, slot), others)),
    ];
    await Promise.all(handled);
    assert.ok(attempted.includes('b-0') && attempted.includes('p-0'));
    assert.ok(
      parkedWhenOthersWent < N / 2,
      `the others went when ${parkedWhenOthersWent} of the ${N} parks were written, not behind them`,
    );
    assert.equal(readBack(r, waitingTopic).length, N, 'every park has its record');
    const stateRecords = stateWrites(r).filter((w) => String(w.message.key) === 'ord/s:h').length;
    assert.ok(stateRecords < N / 4, `${stateRecords} state records for ${N} parks`);
    assert.deepEqual(
      attempted.filter((id) => id.startsWith('h-')),
      ['h-0'],
      'nothing of h attempted behind its head',
    );
    assert.equal(r.states.get('ord', 's:h')?.next, N);
  });

  it('a crash in the middle of a burst of parks leaves no place without its record: each park read again writes it', async () => {
    const r = rig();
    const waitingTopic = waitingTopicName(config, 'ord');
    // Kafka takes the state records and the first three waiting records, then the process "dies".
    let waitingTaken = 0;
    const dying: RecordSink = {
      send: (topic, message) => {
        if (topic === waitingTopic && waitingTaken++ >= 3) return new Promise(() => undefined);
        r.sent.push({ topic, message });
        return Promise.resolve();
      },
    };
    const before = r.another({ sink: dying, store: storeOver(r.states, dying) });
    const retrying: AttemptStep = async ({ job: j }) => (j.messageId === 'c-0' ? 'retrying' : 'delivered');
    await before.step(turn(job('c', 'c-0'), ord), retrying);
    const ids = Array.from({ length: 10 }, (_, i) => `c-${i + 1}`);
    for (const id of ids) void before.step(turn(job('c', id), ord), retrying);
    await waitUntil(() => readBack(r, waitingTopic).length === 3 && waitingTaken === 10, 5_000, 'parks under way');
    // The restart reads the newest state record written.
    const last = stateWrites(r)
      .filter((w) => String(w.message.key) === 'ord/s:c')
      .at(-1)!;
    const restarted = rig();
    restarted.sent.push(...r.sent.filter((w) => w.topic === waitingTopic));
    restarted.states.apply(decodeStateRecord('ord/s:c', Buffer.from(last.message.value as string)));
    assert.equal(restarted.states.get('ord', 's:c')?.next, 10, 'the state knows every park');
    const attempted: string[] = [];
    const attempt: AttemptStep = async ({ job: j }) => (attempted.push(j.messageId), 'delivered');
    // The events are read again from their source (none was committed) and write their records again.
    for (const id of ids) await restarted.ordering.step(turn(job('c', id), ord), attempt);
    assert.deepEqual(attempted, [], 'nothing overtook the head');
    const head: DeliveryJob = { ...job('c', 'c-0'), previous: retryOf('c-0') };
    await restarted.ordering.step(turn(head, ord), attempt);
    for (const record of readBack(restarted, waitingTopic)) await restarted.ordering.onWaiting(record, attempt);
    assert.deepEqual(attempted, ['c-0', ...ids], 'every parked event once, in order');
    assert.equal(restarted.states.size, 0, 'the queue is gone');
  });

  it("a park whose record is slow to be written holds the tail's place: later parks wait for it, every state record stays readable", async () => {
    const r = rig();
    const waitingTopic = waitingTopicName(config, 'ord');
    // Kafka is slow to take the first waiting record; every other write is taken at once.
    let releaseFirst!: () => void;
    const firstTaken = new Promise<void>((resolve) => (releaseFirst = resolve));
    let waitingWrites = 0;
    const sink: RecordSink = {
      send: async (topic, message) => {
        if (topic === waitingTopic && waitingWrites++ === 0) await firstTaken;
        r.sent.push({ topic, message });
      },
    };
    const ordering = r.another({ sink, store: storeOver(r.states, sink) });
    const retrying: AttemptStep = async ({ job: j }) => (j.messageId === 'q-0' ? 'retrying' : 'delivered');
    await ordering.step(turn(job('q', 'q-0'), ord), retrying);
    const N = PARK_TAIL_MAX + 8;
    const step = (i: number) => ordering.step(turn(job('q', `q-${i + 1}`), ord), retrying);
    // A full tail's worth of parks; all but the first are written, then more events come.
    const steps = Array.from({ length: PARK_TAIL_MAX }, (_, i) => step(i));
    await waitUntil(
      () => readBack(r, waitingTopic).length === PARK_TAIL_MAX - 1,
      5_000,
      'the parks after the first written',
    );
    steps.push(...Array.from({ length: N - PARK_TAIL_MAX }, (_, i) => step(PARK_TAIL_MAX + i)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(r.states.get('ord', 's:q')?.next, PARK_TAIL_MAX, 'no park past a full tail whose oldest is unwritten');
    releaseFirst();
    await Promise.all(steps);
    assert.equal(readBack(r, waitingTopic).length, N);
    for (const w of stateWrites(r).filter((x) => String(x.message.key) === 'ord/s:q')) {
      const record = decodeStateRecord('ord/s:q', Buffer.from(w.message.value as string));
      assert.equal(record.kind, 'queue', 'every state record written is readable');
      if (record.kind === 'queue') assert.ok((record.state?.tail?.tags.length ?? 0) <= PARK_TAIL_MAX);
    }
  });

  it('a waiting record whose destination was disabled meanwhile is dead-lettered no_endpoints, as a parked or redelivered one is', async () => {
    const r = rig();
    const attempt: AttemptStep = async ({ job: j }) => (j.messageId === 'w-0' ? 'retrying' : 'delivered');
    for (let i = 0; i < 3; i++) await r.ordering.step(turn(job('w', `w-${i}`), ord), attempt);
    const waitingTopic = waitingTopicName(config, 'ord');
    await waitUntil(() => readBack(r, waitingTopic).length >= 2, 5_000, 'the two behind the head parked');
    const waiting = readBack(r, waitingTopic);
    assert.deepEqual(waiting.map(unparkedId), ['w-1', 'w-2'], 'the two behind the head parked');
    const disabled: SluiceConfig = {
      ...config,
      destinations: config.destinations.map((d) => (d.id === ord.id ? { ...d, enabled: false } : d)),
    };
    const dead: string[] = [];
    const after = r.another({
      config: () => disabled,
      deadLetter: async (j, { reason, lastError }) => void dead.push(`${j.messageId} ${reason}: ${lastError}`),
    });
    for (const record of waiting) await after.onWaiting(record, attempt);
    assert.deepEqual(dead, [
      'w-1 no_endpoints: destination ord is disabled',
      'w-2 no_endpoints: destination ord is disabled',
    ]);
  });

  it('a destination gone while a user waits: each waiting record and the head are dead-lettered destination_deleted as read, the queue moves past each, and the id created again starts with no queue', async () => {
    const r = rig();
    let current = config;
    const dead: string[] = [];
    const attempted: string[] = [];
    const attempt: AttemptStep = async ({ job: j }) => {
      attempted.push(j.messageId);
      return j.messageId === 'g-0' ? 'retrying' : 'delivered';
    };
    // Started while `ord` is ordered; the config in force changes under it.
    const ordering = r.another({
      config: () => current,
      deadLetter: async (j, { reason, lastError }) => void dead.push(`${j.messageId} ${reason}: ${lastError}`),
    });
    for (let i = 0; i < 3; i++) await ordering.step(turn(job('g', `g-${i}`), ord), attempt);
    const waitingTopic = waitingTopicName(config, 'ord');
    await waitUntil(() => readBack(r, waitingTopic).length >= 2, 5_000, 'the two behind the head parked');
    assert.deepEqual(place(r.states.get('ord', 's:g')), { head: 'g-0', first: 0, next: 2, bytes: 4 });
    current = { ...config, destinations: config.destinations.filter((d) => d.id !== 'ord') };
    for (const record of readBack(r, waitingTopic)) await ordering.onWaiting(record, attempt);
    assert.deepEqual(dead, [
      'g-1 destination_deleted: destination ord is gone',
      'g-2 destination_deleted: destination ord is gone',
    ]);
    assert.deepEqual(
      place(r.states.get('ord', 's:g')),
      { head: 'g-0', first: 2, next: 2, bytes: 0 },
      'moved past both',
    );
    // The head's retry, dead-lettered by the redeliver intake, releases the queue.
    await ordering.deadLetteredAtIntake({ ...job('g', 'g-0'), previous: retryOf('g-0') }, PARTITION);
    assert.equal(r.states.get('ord', 's:g'), undefined, 'no queue left');
    assert.deepEqual(attempted, ['g-0'], 'nothing attempted after the destination went');
    // Created again with the id: the user's next event waits for nothing.
    current = config;
    await ordering.step(turn(job('g', 'g-3'), ord), attempt);
    assert.deepEqual(attempted, ['g-0', 'g-3']);
  });

  it('ordering turned off while a user waits: each waiting record goes at once and leaves its place, the head’s retry releases the queue; turned on again, nothing waits for them', async () => {
    const r = rig();
    let current = config;
    const attempted: string[] = [];
    const attempt: AttemptStep = async ({ job: j }) => {
      attempted.push(j.messageId);
      return j.messageId === 'o-0' ? 'retrying' : 'delivered';
    };
    const ordering = r.another({ config: () => current });
    const unorderedOrd = { ...ord, ordering: undefined };
    for (let i = 0; i < 3; i++) await ordering.step(turn(job('o', `o-${i}`), ord), attempt);
    const waitingTopic = waitingTopicName(config, 'ord');
    await waitUntil(() => readBack(r, waitingTopic).length >= 2, 5_000, 'the two behind the head parked');
    assert.deepEqual(place(r.states.get('ord', 's:o')), { head: 'o-0', first: 0, next: 2, bytes: 4 });
    current = { ...config, destinations: config.destinations.map((d) => (d.id === 'ord' ? unorderedOrd : d)) };
    for (const record of readBack(r, waitingTopic)) await ordering.onWaiting(record, attempt);
    assert.deepEqual(attempted, ['o-0', 'o-1', 'o-2'], 'delivered as read, not waiting for the head');
    assert.deepEqual(
      place(r.states.get('ord', 's:o')),
      { head: 'o-0', first: 2, next: 2, bytes: 0 },
      'each left its place',
    );
    // The head comes back from the retry path while the destination is not ordered: delivered, it releases the queue.
    await ordering.step(
      { ...turn({ ...job('o', 'o-0'), previous: retryOf('o-0') }, unorderedOrd), source: 'retry' },
      async () => 'delivered',
    );
    assert.equal(r.states.get('ord', 's:o'), undefined, 'no queue left');
    // Ordered again: the user's next event waits for nothing.
    current = config;
    await ordering.step(turn(job('o', 'o-3'), ord), attempt);
    assert.deepEqual(attempted, ['o-0', 'o-1', 'o-2', 'o-3']);
  });

  it('a waiting record waiting in memory for its turn when its destination goes is dead-lettered once woken (the head dead-lettered wakes it), not written again nor attempted', async () => {
    const r = rig();
    let current = config;
    const dead: string[] = [];
    const attempted: string[] = [];
    const attempt: AttemptStep = async ({ job: j }) => {
      attempted.push(j.messageId);
      return j.messageId === 'i-0' ? 'retrying' : 'delivered';
    };
    const ordering = r.another({
      config: () => current,
      deadLetter: async (j, { reason }) => void dead.push(`${j.messageId} ${reason}`),
      idleWaitMs: 60_000,
    });
    await ordering.step(turn(job('i', 'i-0'), ord), attempt);
    await ordering.step(turn(job('i', 'i-1'), ord), attempt);
    const waitingTopic = waitingTopicName(config, 'ord');
    await waitUntil(() => readBack(r, waitingTopic).length === 1, 5_000, 'i-1 parked');
    const waiting = ordering.onWaiting(readBack(r, waitingTopic)[0]!, attempt);
    await waitUntil(() => ordering.waits().turnInMemory === 1, 5_000, 'i-1 waiting in memory for its turn');
    try {
      current = { ...config, destinations: config.destinations.filter((d) => d.id !== 'ord') };
      await ordering.deadLetteredAtIntake({ ...job('i', 'i-0'), previous: retryOf('i-0') }, PARTITION);
      await waiting;
      assert.deepEqual(dead, ['i-1 destination_deleted']);
      assert.equal(readBack(r, waitingTopic).length, 1, 'not written again');
      assert.deepEqual(attempted, ['i-0']);
      assert.equal(ordering.waits().turnInMemory, 0);
      assert.equal(r.states.get('ord', 's:i'), undefined, 'no queue left');
    } finally {
      ordering.close();
      await waiting;
    }
  });

  it('a waiting record idle in its slot (no memory for waiting records) when its destination goes is dead-lettered once its wait ends, not written again nor attempted', async () => {
    const r = rig();
    let current = config;
    const dead: string[] = [];
    const attempted: string[] = [];
    const attempt: AttemptStep = async ({ job: j }) => {
      attempted.push(j.messageId);
      return j.messageId === 'i-0' ? 'retrying' : 'delivered';
    };
    const ordering = r.another({
      config: () => current,
      deadLetter: async (j, { reason }) => void dead.push(`${j.messageId} ${reason}`),
      idleWaitMs: 60_000,
      maxHeldBytes: 0,
    });
    await ordering.step(turn(job('i', 'i-0'), ord), attempt);
    await ordering.step(turn(job('i', 'i-1'), ord), attempt);
    const waitingTopic = waitingTopicName(config, 'ord');
    await waitUntil(() => readBack(r, waitingTopic).length === 1, 5_000, 'i-1 parked');
    // Read once: not its turn, it goes round; its copy, read in the same round, waits for progress.
    await ordering.onWaiting(readBack(r, waitingTopic)[0]!, attempt);
    const copies = readBack(r, waitingTopic);
    assert.equal(copies.length, 2, 'gone round once');
    const idle = ordering.onWaiting(copies[1]!, attempt);
    await waitUntil(() => ordering.waits().idle === 1, 5_000, 'the copy idle');
    try {
      current = { ...config, destinations: config.destinations.filter((d) => d.id !== 'ord') };
      await ordering.deadLetteredAtIntake({ ...job('i', 'i-0'), previous: retryOf('i-0') }, PARTITION);
      await idle;
      assert.deepEqual(dead, ['i-1 destination_deleted']);
      assert.equal(readBack(r, waitingTopic).length, 2, 'not written again');
      assert.deepEqual(attempted, ['i-0']);
      assert.equal(ordering.waits().idle, 0);
      assert.equal(r.states.get('ord', 's:i'), undefined, 'no queue left');
    } finally {
      ordering.close();
      await idle;
    }
  });

  it('a gap record of a gone destination: nothing to dead-letter (its event was rejected), the queue moves past it', async () => {
    const r = rig();
    let current = config;
    const dead: string[] = [];
    const attempt: AttemptStep = async ({ job: j }) => (j.messageId === 'p-0' ? 'retrying' : 'delivered');
    const ordering = r.another({
      config: () => current,
      deadLetter: async (j, { reason }) => void dead.push(`${j.messageId} ${reason}`),
    });
    await ordering.step(turn(job('p', 'p-0'), ord), attempt);
    await ordering.step(turn(job('p', 'p-1'), ord), attempt);
    const waitingTopic = waitingTopicName(config, 'ord');
    await waitUntil(() => readBack(r, waitingTopic).length === 1, 5_000, 'p-1 parked');
    const [parkedRecord] = readBack(r, waitingTopic);
    const gap = {
      ...parkedRecord!,
      value: Buffer.alloc(0),
      headers: {
        ...parkedRecord!.headers,
        [ORDERING_HEADER]: JSON.stringify({ ...JSON.parse(String(parkedRecord!.headers[ORDERING_HEADER])), gap: true }),
      },
    } as ConsumedRecord;
    current = { ...config, destinations: config.destinations.filter((d) => d.id !== 'ord') };
    await ordering.onWaiting(gap, attempt);
    assert.deepEqual(dead, []);
    assert.deepEqual(place(r.states.get('ord', 's:p')), { head: 'p-0', first: 1, next: 1, bytes: 0 });
  });

  it('the queue is capped by count: the event past the cap is dead-lettered, the queue kept', async () => {
    const r = rig();
    const capped = r.another({ maxWaiting: 3 });
    const attempt: AttemptStep = async ({ job: j }) => (j.messageId === 'c-0' ? 'retrying' : 'delivered');
    for (let i = 0; i < 5; i++) await capped.step(turn(job('c', `c-${i}`), ord), attempt);
    assert.deepEqual(
      r.dead.map((d) => d.job.messageId),
      ['c-4'],
    );
    assert.match(r.dead[0]!.lastError, /3 events \(6 bytes\) of this user already wait behind c-0/);
  });

  it('with the memory budget spent no new queue starts (the event goes unordered, counted); existing queues go on', async () => {
    const big = rig();
    const small = rig(1); // spent by the first queue
    for (const r of [big, small]) {
      const attempt: AttemptStep = async ({ job: j }) => (j.messageId.endsWith('-0') ? 'retrying' : 'delivered');
      const attempted: string[] = [];
      const counting: AttemptStep = async (t) => (attempted.push(t.job.messageId), attempt(t));
      await r.ordering.step(turn(job('u1', 'u1-0'), ord), counting);
      await r.ordering.step(turn(job('u2', 'u2-0'), ord), counting);
      await r.ordering.step(turn(job('u2', 'u2-1'), ord), counting);
      await r.ordering.step(turn(job('u1', 'u1-1'), ord), counting);
      const counted = (await r.metrics.orderingUnordered.get()).values.find((v) => v.labels.destination === 'ord');
      const gauge = (await r.metrics.orderingStateBytes.get()).values[0]?.value;
      if (r === big) {
        assert.deepEqual(attempted, ['u1-0', 'u2-0'], 'both users held behind their heads');
        assert.equal(r.states.size, 2);
        assert.equal(counted, undefined);
      } else {
        assert.equal(r.states.size, 1, "u1's queue started, u2's refused");
        assert.deepEqual(attempted, ['u1-0', 'u2-0', 'u2-1'], 'u2 not held; u1 still held behind its head');
        assert.equal(counted?.value, 1);
        assert.equal(readBack(r, waitingTopicName(config, 'ord')).length, 1, "u1's event parked");
      }
      r.metrics.readOrderingStateFrom(() => r.states.bytes);
      assert.equal((await r.metrics.orderingStateBytes.get()).values[0]?.value, r.states.bytes);
      assert.ok(r.states.bytes > 0 && gauge !== undefined);
    }
  });

  /**
   * A user's queue held by its head with N - 1 events waiting, the waiting topic read through one
   * partition's slots; then the head delivered. `memory` false: no memory for waiting records.
   */
  const heldThenReleased = async (memory: boolean) => {
    const r = rig();
    const o = memory ? r.ordering : r.another({ maxHeldBytes: 0 });
    const N = 400;
    const ids = Array.from({ length: N }, (_, i) => `w-${i}`);
    const attempted: string[] = [];
    let held = true;
    const attempt: AttemptStep = async ({ job: j }) => {
      if (j.messageId === 'w-0' && held) return 'retrying';
      attempted.push(j.messageId);
      return 'delivered';
    };
    await o.step(turn(job('w', 'w-0'), ord), attempt);
    for (const id of ids.slice(1)) await o.step(turn(job('w', id), ord), attempt);
    const waitingTopic = waitingTopicName(config, 'ord');
    const cycled = async () =>
      (await r.metrics.orderingCycled.get()).values.find((v) => v.labels.destination === 'ord')?.value ?? 0;
    // The consumer: every record of the waiting topic handed out in order through the partition's slots.
    const handle = slots(SLOTS);
    const handled: Promise<void>[] = [];
    let read = 0;
    const readOn = () => {
      const records = readBack(r, waitingTopic);
      for (; read < records.length; read++) {
        const record = records[read]!;
        handled.push(handle((slot) => o.onWaiting(record, attempt, slot).then(() => undefined)));
      }
    };
    const reader = setInterval(readOn, 5);
    try {
      if (memory) {
        // Held: each record waits in memory for its turn, its slot given back, none going round.
        await waitUntil(() => o.waits().turnInMemory === N - 1, 5_000, 'every waiting record waiting in memory');
        assert.equal(await cycled(), 0);
      } else {
        // Held, no memory: each record goes round once, then waits in its slot for progress.
        await waitUntil(async () => (await cycled()) >= N - 1, 5_000, 'every waiting record gone round once');
      }
      assert.deepEqual(attempted, []);
      const before = await cycled();
      held = false;
      const head: DeliveryJob = { ...job('w', 'w-0'), previous: retryOf('w-0') };
      await o.step(turn(head, ord), attempt);
      await waitUntil(
        () => attempted.length === N,
        10_000,
        () => `all delivered (${attempted.length} of ${N})`,
      );
      assert.deepEqual(attempted, ids, 'in acceptance order, each once');
      const after = (await cycled()) - before;
      // Each record goes round at most once more while the partition is read on to the front.
      assert.ok(after <= (memory ? 0 : N), `${after} records written again at the tail while ${N} events went out`);
      assert.equal(r.states.size, 0, 'the queue is gone');
    } finally {
      clearInterval(reader);
      o.close();
      await Promise.all(handled);
    }
    assert.equal((await r.metrics.orderingHeldBytes.get()).values[0]?.value, 0, 'nothing left in memory');
  };

  it('a queue held long, then released: its waiting records wait in memory, none going round, and go in order at once', () =>
    heldThenReleased(true));

  it('the same with no memory for waiting records: each goes round once, then waits in its slot, and all go in order at once', () =>
    heldThenReleased(false));

  it("a held user's waiting records do not hold the partition's slots: another user's record behind them goes at once", async () => {
    // While the partition is read, each write is acknowledged after 10 ms: a record going round
    // costs its user's chain that long (set up and closed down with instant writes).
    const kafka = { writeMs: 0 };
    const r = rig(undefined, kafka);
    const o = r.ordering;
    const N = 400;
    const attempted: string[] = [];
    const heldUsers = new Set(['w', 'v']);
    const attempt: AttemptStep = async ({ job: j }) => {
      if (j.messageId.endsWith('-0') && heldUsers.has(j.key!.slice(2))) return 'retrying';
      attempted.push(j.messageId);
      return 'delivered';
    };
    // w held by its head with N - 1 waiting; then v's head, v-1 waiting behind it, v's head delivered.
    for (let i = 0; i < N; i++) await o.step(turn(job('w', `w-${i}`), ord), attempt);
    await o.step(turn(job('v', 'v-0'), ord), attempt);
    await o.step(turn(job('v', 'v-1'), ord), attempt);
    heldUsers.delete('v');
    await o.step(turn({ ...job('v', 'v-0'), previous: retryOf('v-0') }, ord), attempt);
    const waitingTopic = waitingTopicName(config, 'ord');
    await waitUntil(() => readBack(r, waitingTopic).length === N, 5_000, 'every park written');
    const handle = slots(SLOTS);
    const handled: Promise<void>[] = [];
    let read = 0;
    const readOn = () => {
      const records = readBack(r, waitingTopic);
      for (; read < records.length; read++) {
        const record = records[read]!;
        handled.push(handle((slot) => o.onWaiting(record, attempt, slot).then(() => undefined)));
      }
    };
    kafka.writeMs = 10;
    const started = Date.now();
    const reader = setInterval(readOn, 5);
    try {
      // v-1, v's front, is on the waiting topic behind w's N - 1 records.
      await waitUntil(() => attempted.includes('v-1'), 5_000, "v's waiting record delivered");
      const ms = Date.now() - started;
      kafka.writeMs = 0;
      assert.ok(ms < 1_500, `v-1 delivered ${ms} ms after the partition was read (w's records went round first)`);
      assert.ok(!attempted.some((id) => id.startsWith('w-')), 'w still held');
    } finally {
      clearInterval(reader);
      o.close();
      await Promise.all(handled);
    }
  });

  it("a waiting record of its user's earlier queue, read again after that queue ended and a new one began, is a copy: dropped, never taken for the new queue's place", async () => {
    const r = rig();
    const attempted: string[] = [];
    const failing = new Set(['e-0', 'e-2']);
    const attempt: AttemptStep = async ({ job: j }) => {
      attempted.push(j.messageId);
      return failing.has(j.messageId) ? 'retrying' : 'delivered';
    };
    const waitingTopic = waitingTopicName(config, 'ord');
    const retried = async (id: string) => {
      failing.delete(id);
      await r.ordering.step(turn({ ...job('e', id), previous: retryOf(id) }, ord), attempt);
    };
    // The first queue: e-1 waits behind e-0, then goes; the queue ends.
    await r.ordering.step(turn(job('e', 'e-0'), ord), attempt);
    await r.ordering.step(turn(job('e', 'e-1'), ord), attempt);
    await waitUntil(() => readBack(r, waitingTopic).length === 1, 5_000, 'e-1 parked');
    const [oldRecord] = readBack(r, waitingTopic);
    await retried('e-0');
    await r.ordering.onWaiting(oldRecord!, attempt);
    assert.equal(r.states.get('ord', 's:e'), undefined, 'the first queue ended');
    // A second queue of the same user: e-3 waits behind e-2.
    await r.ordering.step(turn(job('e', 'e-2'), ord), attempt);
    await r.ordering.step(turn(job('e', 'e-3'), ord), attempt);
    await waitUntil(() => readBack(r, waitingTopic).length === 2, 5_000, 'e-3 parked');
    await retried('e-2');
    // e-1's record read again (its offset was not committed before a crash), then e-3's.
    await r.ordering.onWaiting(oldRecord!, attempt);
    await r.ordering.onWaiting(readBack(r, waitingTopic)[1]!, attempt);
    assert.deepEqual(attempted, ['e-0', 'e-0', 'e-1', 'e-2', 'e-2', 'e-3'], 'e-1 once, e-3 after e-2');
    assert.equal(r.states.get('ord', 's:e'), undefined, 'the second queue ended');
  });

  it('after a restart, the live head is attempted again and an event parked last writes its record again', async () => {
    const r = rig();
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    const attempted: string[] = [];
    // Nothing waits in memory: l-1 is parked behind l-0 in flight.
    const first = r.another({ maxHeld: 0 });
    const slow: AttemptStep = async ({ job: j }) => {
      attempted.push(j.messageId);
      if (attempted.length === 1) await gate; // the first l-0, in flight at the "crash"
      return 'delivered';
    };
    const inFlight = first.step(turn(job('l', 'l-0'), ord), slow);
    await waitUntil(() => attempted.includes('l-0'), 5_000, 'l-0 in flight');
    await first.step(turn(job('l', 'l-1'), ord), slow);
    // "Crash": a new Ordering over the same states; l-0 and l-1 are read again from their source.
    const again = r.another();
    const before = readBack(r, waitingTopicName(config, 'ord')).length;
    await again.step(turn(job('l', 'l-0'), ord), slow);
    assert.deepEqual(attempted, ['l-0', 'l-0'], 'the live head attempted again');
    await again.step(turn(job('l', 'l-1'), ord), slow);
    const records = readBack(r, waitingTopicName(config, 'ord'));
    assert.equal(records.length, before + 1, "l-1's record written again at its place");
    for (const record of records) await again.onWaiting(record, slow);
    assert.deepEqual(attempted, ['l-0', 'l-0', 'l-1'], 'l-1 once, after l-0');
    openGate();
    await inFlight;
  });
});
