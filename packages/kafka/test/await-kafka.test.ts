// awaitKafka without a broker: nothing listens on the address, so every attempt fails the same way.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { awaitKafka } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { freePort, waitUntil } from '@sluice/testkit';

test('while the brokers refuse: one error line per cause, onWaiting once; abort stops it', async () => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  const abort = new AbortController();
  let waitingCalls = 0;
  const waiting = awaitKafka({
    brokers: [`127.0.0.1:${await freePort()}`],
    clientId: 'await-kafka-test',
    // Debug: a repeated failure is logged at debug level, which is how the test sees the attempts.
    logger: createLogger({ name: 'ingest', level: 'debug', destination: sink }),
    signal: abort.signal,
    onWaiting: () => void waitingCalls++,
    initialDelayMs: 50,
    maxDelayMs: 100,
  });
  // Several attempts fail in the same way (the first and two more); the cause is logged once.
  await waitUntil(() => lines.filter((l) => l.includes('"level":20')).length >= 2, 10_000, 'three attempts');
  const errors = lines.filter((l) => l.includes('"level":50'));
  assert.equal(errors.length, 1, lines.join(''));
  assert.match(errors[0]!, /Kafka: broker unreachable \(check KAFKA_BROKERS\)/);
  assert.match(errors[0]!, /"cause":"broker unreachable"/);
  assert.equal(waitingCalls, 1);
  abort.abort(new Error('SIGTERM'));
  await assert.rejects(waiting, /SIGTERM/);
});

test('an onWaiting that throws ends the wait with its error', async () => {
  await assert.rejects(
    awaitKafka({
      brokers: [`127.0.0.1:${await freePort()}`],
      clientId: 'await-kafka-test',
      logger: createLogger({ name: 'ingest', level: 'silent' }),
      onWaiting: () => {
        throw new Error('port taken');
      },
      initialDelayMs: 50,
    }),
    /port taken/,
  );
});
