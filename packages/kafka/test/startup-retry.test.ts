// The start-up retry: which Kafka answers are waited out, until when, and what it tells meanwhile.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import kafkajs from 'kafkajs';
import { Registry } from 'prom-client';
import { createLogger } from '@sluice/logging';
import { isRetriableKafkaError, StartupDeadlineError, StartupRetry } from '@sluice/kafka';

const {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSSASLAuthenticationError,
} = kafkajs;

/** The error kafkajs raises for a broker's error code (its own table: type, code, retriable). */
function protocolError(type: string, code: number, retriable: boolean): Error {
  return new KafkaJSProtocolError({ type, code, retriable, message: `broker said ${type}` } as never);
}

const notLeader = () => protocolError('NOT_LEADER_FOR_PARTITION', 6, true);

test('retriable: the "not yet" answers, connection errors and kafkajs wrappers around them', () => {
  const retriable: [string, unknown][] = [
    ['NOT_LEADER_OR_FOLLOWER', notLeader()],
    ['LEADER_NOT_AVAILABLE', protocolError('LEADER_NOT_AVAILABLE', 5, true)],
    ['COORDINATOR_LOAD_IN_PROGRESS', protocolError('GROUP_LOAD_IN_PROGRESS', 14, true)],
    ['COORDINATOR_NOT_AVAILABLE', protocolError('GROUP_COORDINATOR_NOT_AVAILABLE', 15, true)],
    ['NOT_COORDINATOR', protocolError('NOT_COORDINATOR_FOR_GROUP', 16, true)],
    ['UNKNOWN_TOPIC_OR_PARTITION', protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3, true)],
    ['REQUEST_TIMED_OUT', protocolError('REQUEST_TIMED_OUT', 7, true)],
    ['connection error', new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9')],
    ['retries exceeded around not-leader', new KafkaJSNumberOfRetriesExceeded(notLeader(), { retryCount: 8 } as never)],
    [
      'non-retriable wrapper around not-leader',
      new (KafkaJSNonRetriableError as new (e: Error, o: { cause: Error }) => Error)(notLeader(), {
        cause: notLeader(),
      }),
    ],
    ['a typed retryable error', Object.assign(new Error('topics have no leader yet'), { retryable: true })],
  ];
  for (const [name, err] of retriable) assert.equal(isRetriableKafkaError(err), true, name);
});

test('not retriable: authentication, authorization, programming errors, and errors that say nothing', () => {
  const final: [string, unknown][] = [
    [
      'SASL authentication failed',
      new (KafkaJSSASLAuthenticationError as new (m: string) => Error)('SASL PLAIN authentication failed'),
    ],
    ['TOPIC_AUTHORIZATION_FAILED', protocolError('TOPIC_AUTHORIZATION_FAILED', 29, false)],
    [
      'retries exceeded around an authorization failure',
      new KafkaJSNumberOfRetriesExceeded(protocolError('TOPIC_AUTHORIZATION_FAILED', 29, false), {} as never),
    ],
    ['TypeError', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['a plain error', new Error('something else')],
  ];
  for (const [name, err] of final) assert.equal(isRetriableKafkaError(err), false, name);
});

/** A clock the test moves; sleeps pass at once (the retry's waits are real timers, kept short). */
function retryWith(timeoutMs: number) {
  let now = 1_000_000;
  const lines: { msg: string; operation: string }[] = [];
  const logger = createLogger({
    name: 'startup-retry-test',
    level: 'warn',
    destination: { write: (line: string) => lines.push(JSON.parse(line)) > 0 } as never,
  });
  const registry = new Registry();
  const retry = new StartupRetry({
    timeoutMs,
    logger,
    registry,
    now: () => now,
    initialDelayMs: 1,
    maxDelayMs: 1,
    logEveryMs: 5_000,
  });
  return { retry, registry, lines, advance: (ms: number) => (now += ms) };
}

test('a retriable answer is tried again until the call succeeds: rate-limited log line, waiting gauge, retry counter', async () => {
  const { retry, registry, lines, advance } = retryWith(300_000);
  let calls = 0;
  const seen: (string | undefined)[] = [];
  const offsets = await retry.run('list offsets of sluice.events', async () => {
    calls += 1;
    if (calls > 1) seen.push(retry.waitingFor);
    advance(1_000);
    if (calls <= 30) throw new KafkaJSNumberOfRetriesExceeded(notLeader(), { retryCount: 8 } as never);
    return [{ partition: 0, high: '0', low: '0' }];
  });
  assert.deepEqual(offsets, [{ partition: 0, high: '0', low: '0' }]);
  assert.equal(calls, 31);
  assert.equal(seen[0], 'list offsets of sluice.events answered NOT_LEADER_FOR_PARTITION');
  assert.equal(retry.waitingFor, undefined, 'nothing waited for once it answered');
  // 30 s of "not leader", one line at most every 5 s.
  assert.equal(lines.length, 6);
  assert.match(
    lines[0]!.msg,
    /^waiting for Kafka: list offsets of sluice\.events answered NOT_LEADER_FOR_PARTITION; retrying until \d{4}-/,
  );
  const metrics = await registry.getMetricsAsJSON();
  const value = (name: string) => metrics.find((m) => m.name === name)?.values[0]?.value;
  assert.equal(value('sluice_startup_retries_total'), 30);
  assert.equal(value('sluice_startup_waiting'), 0, 'no longer waiting');
});

test('a non-retriable error ends the call at once', async () => {
  const { retry } = retryWith(300_000);
  let calls = 0;
  const denied = protocolError('TOPIC_AUTHORIZATION_FAILED', 29, false);
  await assert.rejects(
    retry.run('list offsets of sluice.events', async () => {
      calls += 1;
      throw denied;
    }),
    (err) => err === denied,
  );
  assert.equal(calls, 1);
});

test('the deadline ends the wait with StartupDeadlineError naming the call and the answer', async () => {
  const { retry, advance } = retryWith(60_000);
  let calls = 0;
  await assert.rejects(
    retry.run('fetch topic metadata', async () => {
      calls += 1;
      advance(10_000);
      throw notLeader();
    }),
    (err) =>
      err instanceof StartupDeadlineError &&
      err.code === 'startup_deadline' &&
      err.retryable === false &&
      /60 s.*fetch topic metadata still answered NOT_LEADER_FOR_PARTITION/.test(err.message),
  );
  assert.equal(calls, 6, 'tried until the deadline, not beyond');
});
