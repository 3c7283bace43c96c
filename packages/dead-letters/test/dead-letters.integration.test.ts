import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { retryStateFromHeaders, retryStateToHeaders, type RetryState } from '@sluice/envelope';
import { SafeProducer, type Kafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { createTestTopics, readTopic, testConfig, uniqueName, testDeadLetter, testKafka } from '@sluice/testkit';
import {
  forEachDeadLetter,
  InvalidFilterError,
  listDeadLetters,
  matchesFilter,
  planReplay,
  ReadTimeoutError,
  REPLAY_HEADERS,
  replayDeadLetters,
  replayState,
} from '@sluice/dead-letters';

const logger = createLogger({ name: 'dead-letters-test', level: 'warn' });
const T0 = 1_700_000_000_000;

const dead = (over: Partial<RetryState> = {}) => testDeadLetter(over, T0);

describe('dead-letter filter (pure)', () => {
  const letter = { state: dead({ messageId: 'msg-1' }) };
  const rows: [string, Parameters<typeof matchesFilter>[1], boolean][] = [
    ['empty filter', {}, true],
    ['message', { messageId: 'msg-1' }, true],
    ['other message', { messageId: 'msg-2' }, false],
    ['destination', { destinationId: 'dest-a' }, true],
    ['other destination', { destinationId: 'dest-b' }, false],
    ['source', { sourceId: 'src-a' }, true],
    ['reason', { reason: 'window_exhausted' }, true],
    ['other reason', { reason: 'permanent_failure' }, false],
    ['other reason: destination_deleted', { reason: 'destination_deleted' }, false],
    ['since = deadAt (inclusive)', { since: T0 + 14_400_000 }, true],
    ['since after', { since: T0 + 14_400_001 }, false],
    ['until = deadAt (exclusive)', { until: T0 + 14_400_000 }, false],
    ['until after', { until: T0 + 14_400_001 }, true],
    ['never replayed, asked for replayed', { replayed: 'yes' }, false],
    ['never replayed, asked for not replayed', { replayed: 'no' }, true],
  ];
  for (const [name, filter, expected] of rows) it(name, () => assert.equal(matchesFilter(letter, filter), expected));

  it('a dead letter of a deleted destination is taken by its reason, and only by it', () => {
    const deleted = { state: dead({ messageId: 'msg-d', deadReason: 'destination_deleted' }) };
    assert.equal(matchesFilter(deleted, { reason: 'destination_deleted', destinationId: 'dest-a' }), true);
    assert.equal(matchesFilter(deleted, { reason: 'no_endpoints' }), false);
  });

  it('replay state: fresh window from now, due now, schedule restarts, history kept', () => {
    const state = dead({});
    const fresh = replayState(state, T0 + 20_000_000);
    assert.equal(fresh.firstAttemptAt, T0 + 20_000_000);
    assert.equal(fresh.dueAt, T0 + 20_000_000);
    assert.equal(fresh.attempts, 0);
    assert.equal(fresh.deadReason, undefined);
    assert.equal(fresh.deadAt, undefined);
    assert.equal(fresh.windowMs, undefined, 'the old window override is dropped; the configured window applies');
    assert.deepEqual(fresh.history, state.history);
    assert.equal(replayState(state, 1, 60_000).windowMs, 60_000);
  });
});

describe('listing and replaying dead letters against the real broker', () => {
  const config = testConfig();
  const { topics } = config.kafka;
  let kafka: Kafka;
  let producer: SafeProducer;
  const letters = [
    dead({ destinationId: 'dest-a', sourceId: 'src-a', deadAt: T0 + 1_000 }),
    dead({ destinationId: 'dest-a', sourceId: 'src-b', deadAt: T0 + 2_000, deadReason: 'permanent_failure' }),
    dead({ destinationId: 'dest-b', sourceId: 'src-a', deadAt: T0 + 3_000 }),
  ];

  before(async () => {
    kafka = testKafka({ clientId: uniqueName('dl'), logger });
    await createTestTopics(kafka, config);
    producer = new SafeProducer(kafka);
    await producer.connect();
    await producer.send(topics.deadLetter, [
      ...letters.map((s, i) => ({
        key: `${s.sourceId}:u${i}`,
        value: Buffer.from(`{"n":${i}}`),
        headers: retryStateToHeaders(s),
      })),
      { key: 'x', value: 'not a dead letter', headers: { junk: '1' } },
    ]);
  });
  after(() => producer?.disconnect());

  it('an empty topic lists nothing, at once', async () => {
    const empty = testConfig();
    await createTestTopics(kafka, empty);
    const started = Date.now();
    assert.deepEqual((await listDeadLetters(kafka, empty)).letters, []);
    assert.ok(Date.now() - started < 5_000);
  });

  it('lists with filters, counts unreadable records, and stops at the end of the topic', async () => {
    const all = await listDeadLetters(kafka, config);
    assert.equal(all.letters.length, 3);
    assert.equal(all.unreadable, 1);
    assert.deepEqual(all.letters.map((l) => l.value?.toString()).sort(), ['{"n":0}', '{"n":1}', '{"n":2}']);
    assert.deepEqual(
      all.letters.find((l) => l.state.messageId === letters[0]!.messageId)!.state.history,
      letters[0]!.history,
    );
    assert.equal((await listDeadLetters(kafka, config, { destinationId: 'dest-a' })).letters.length, 2);
    assert.equal((await listDeadLetters(kafka, config, { sourceId: 'src-a' })).letters.length, 2);
    assert.equal((await listDeadLetters(kafka, config, { reason: 'permanent_failure' })).letters.length, 1);
    assert.equal((await listDeadLetters(kafka, config, { since: T0 + 2_000, until: T0 + 3_000 })).letters.length, 1);
    await assert.rejects(listDeadLetters(kafka, config, { since: 2, until: 1 }), InvalidFilterError);
  });

  it('streams: each dead letter is handed over as it is read, --limit stops the read, a slow callback is not idle', async () => {
    const seen: string[] = [];
    const limited = await forEachDeadLetter(kafka, config, {}, (l) => void seen.push(l.state.messageId), { limit: 2 });
    assert.deepEqual([limited.matched, limited.limited, seen.length], [2, true, 2]);

    const idleTimeoutMs = 1_000;
    let first = true;
    const slow = await forEachDeadLetter(
      kafka,
      config,
      {},
      async () => {
        if (first) await new Promise((r) => setTimeout(r, idleTimeoutMs * 2));
        first = false;
      },
      { idleTimeoutMs },
    );
    assert.deepEqual(
      [slow.matched, slow.limited, slow.unreadable],
      [3, false, 1],
      'time inside the callback is not idle time',
    );
  });

  it('a read that stops getting records fails with ReadTimeoutError after the idle timeout', async () => {
    // Ends past the topic's real end: the records the read waits for never come.
    const index = { replays: new Map<string, number>(), ends: new Map([[0, 1_000_000n]]) };
    const started = Date.now();
    await assert.rejects(
      forEachDeadLetter(kafka, config, {}, () => {}, { index, idleTimeoutMs: 1_500 }),
      ReadTimeoutError,
    );
    const took = Date.now() - started;
    assert.ok(took >= 1_500 && took < 15_000, `failed after ${took} ms`);
  });

  it('a replay plan counts by destination and reason, and writes nothing', async () => {
    const plan = await planReplay(kafka, config, { sourceId: 'src-a' });
    assert.deepEqual([plan.matched, plan.toReplay, plan.skippedAlreadyReplayed, plan.unreadable], [2, 2, 0, 1]);
    assert.deepEqual({ ...plan.byDestination }, { 'dest-a': 1, 'dest-b': 1 });
    assert.deepEqual({ ...plan.byReason }, { window_exhausted: 2 });
    assert.deepEqual([plan.firstDeadAt, plan.lastDeadAt], [T0 + 1_000, T0 + 3_000]);
    assert.equal((await readTopic(kafka, topics.redeliver, { count: 1, timeoutMs: 1_500 })).length, 0);
  });

  it('a dry run writes nothing; a replay re-injects with a fresh window; a second replay re-injects nothing', async () => {
    const dry = await replayDeadLetters(kafka, config, { destinationId: 'dest-a' }, { dryRun: true });
    assert.deepEqual([dry.matched, dry.replayed, dry.dryRun], [2, 0, true]);
    assert.equal((await readTopic(kafka, topics.redeliver, { count: 1, timeoutMs: 1_500 })).length, 0);

    const before = Date.now();
    const first = await replayDeadLetters(kafka, config, { destinationId: 'dest-a' });
    assert.deepEqual([first.matched, first.replayed, first.skippedAlreadyReplayed], [2, 2, 0]);
    const out = await readTopic(kafka, topics.redeliver, { count: 2, timeoutMs: 10_000, settleMs: 300 });
    assert.equal(out.length, 2);
    for (const r of out) {
      const state = retryStateFromHeaders(r.headers);
      assert.ok(state.firstAttemptAt >= before && state.dueAt === state.firstAttemptAt);
      assert.equal(state.attempts, 0);
      assert.equal(state.deadReason, undefined);
      assert.equal(state.history.length, 1);
      assert.ok(r.headers[REPLAY_HEADERS.replayedAt]);
    }
    assert.deepEqual(out.map((r) => r.value?.toString()).sort(), ['{"n":0}', '{"n":1}']);

    const second = await replayDeadLetters(kafka, config, { destinationId: 'dest-a' });
    assert.deepEqual([second.matched, second.replayed, second.skippedAlreadyReplayed], [2, 0, 2]);
    const listed = await listDeadLetters(kafka, config, { replayed: 'yes' });
    assert.equal(listed.letters.length, 2);
    assert.equal((await listDeadLetters(kafka, config)).letters.length, 3, 'markers are not listed as dead letters');

    const again = await replayDeadLetters(kafka, config, { destinationId: 'dest-a' }, { again: true });
    assert.equal(again.replayed, 2);
    assert.equal((await readTopic(kafka, topics.redeliver, { count: 4, timeoutMs: 10_000 })).length, 4);
  });
});
