import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { retryStateFromHeaders, retryStateToHeaders } from '@sluice/envelope';
import { SafeProducer, type Kafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { createTestTopics, readTopic, testConfig, testKafka, uniqueName } from '@sluice/testkit';
import { listDeadLetters, REPLAY_HEADERS, replayDeadLetters, replayPositions } from '@sluice/dead-letters';

const logger = createLogger({ name: 'replay-positions-test', level: 'warn' });
const T0 = 1_700_000_000_000;

/**
 * A replay from an index (the delivery log's): only the named dead letters are re-injected, only
 * the records between the first and last named offset of a partition are read, and the markers it
 * writes make a later replay of the whole topic skip them.
 */
describe('replaying dead letters at given positions (real broker)', () => {
  const config = testConfig();
  const { topics } = config.kafka;
  let kafka: Kafka;
  let producer: SafeProducer;

  before(async () => {
    kafka = testKafka({ clientId: uniqueName('dlp'), logger });
    await createTestTopics(kafka, config);
    producer = new SafeProducer(kafka);
    await producer.connect();
    // 40 dead letters on partition 0, in order: offsets 0–39.
    await producer.send(
      topics.deadLetter,
      Array.from({ length: 40 }, (_, i) => ({
        key: `src:u${i}`,
        partition: 0,
        value: Buffer.from(`{"n":${i}}`),
        headers: retryStateToHeaders({
          messageId: `m-${i}`,
          sourceId: 'src',
          destinationId: 'dest',
          eventType: 'track',
          endpoints: ['https://a.example/hook'],
          firstAttemptAt: T0,
          attempts: 3,
          history: [],
          deadReason: 'permanent_failure',
          deadAt: T0 + i,
        }),
      })),
    );
  });
  after(() => producer?.disconnect());

  it('re-injects only the named dead letters, reading from the first named offset to the last', async () => {
    const result = await replayPositions(kafka, config, [
      { partition: 0, offset: '30' },
      { partition: 0, offset: '32' },
    ]);
    assert.deepEqual(
      result.replayed.map((p) => p.offset),
      ['30', '32'],
    );
    assert.equal(result.missing, 0);
    assert.equal(result.read, 3, 'offsets 30, 31 and 32 only');
    const out = await readTopic(kafka, topics.redeliver, { count: 2, timeoutMs: 10_000, settleMs: 300 });
    assert.deepEqual(out.map((r) => retryStateFromHeaders(r.headers).messageId).sort(), ['m-30', 'm-32']);
    for (const r of out) assert.ok(r.headers[REPLAY_HEADERS.replayedAt]);

    const replayed = await listDeadLetters(kafka, config, { replayed: 'yes' });
    assert.deepEqual(
      replayed.letters.map((l) => l.state.messageId),
      ['m-30', 'm-32'],
      'its replay markers are on the topic',
    );
    const whole = await replayDeadLetters(kafka, config, {}, { dryRun: true });
    assert.equal(whole.skippedAlreadyReplayed, 2, 'the CLI skips them');
  });

  it('a position past the end of the topic is missing, not waited for', async () => {
    const result = await replayPositions(kafka, config, [{ partition: 0, offset: '10000' }], { idleTimeoutMs: 5_000 });
    assert.deepEqual([result.replayed.length, result.missing], [0, 1]);
  });
});
