import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { REJECT_HEADERS } from '@sluice/envelope';
import {
  ProducerThreadError,
  RecordBatcherClosedError,
  SideRecordRefusedError,
  type ConsumedRecord,
  type Message,
  type RecordSink,
} from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { Registry } from 'prom-client';
import { guardRecord } from '../src/adapters/record-guard.ts';
import { Router } from '../src/adapters/router.ts';
import { RetryMetrics } from '../src/metrics.ts';
import { retryMessage, retryState } from './helpers.ts';
import type { RetryServiceError } from '../src/errors.ts';

const record = {
  topic: 't',
  partition: 0,
  offset: '1',
  key: null,
  value: Buffer.from('x'),
  headers: {},
  timestamp: 0,
} as unknown as ConsumedRecord;

function fakeRouter() {
  const rejected: RetryServiceError[] = [];
  const router = {
    reject: async (_r: ConsumedRecord, err: RetryServiceError) => void rejected.push(err),
  } as unknown as Router;
  return { router, rejected };
}

describe('guardRecord (retry service): one record never stops its partition', () => {
  it('a record whose handling throws is rejected as unprocessable with the error message', async () => {
    const { router, rejected } = fakeRouter();
    await guardRecord(record, router, async () => {
      throw new RangeError('Maximum call stack size exceeded');
    });
    assert.equal(rejected.length, 1);
    assert.equal(rejected[0]!.code, 'unprocessable');
    assert.equal(rejected[0]!.message, 'RangeError: Maximum call stack size exceeded');
  });

  it('a record handled without error is not rejected', async () => {
    const { router, rejected } = fakeRouter();
    let ran = false;
    await guardRecord(record, router, async () => void (ran = true));
    assert.ok(ran);
    assert.equal(rejected.length, 0);
  });

  for (const err of [new RecordBatcherClosedError('closed'), new ProducerThreadError('KafkaJSError', 'gone')]) {
    it(`a failure to write to Kafka (${err.constructor.name}) is thrown on, not rejected`, async () => {
      const { router, rejected } = fakeRouter();
      await assert.rejects(
        guardRecord(record, router, async () => Promise.reject(err)),
        (e: unknown) => e === err,
      );
      assert.equal(rejected.length, 0);
    });
  }
});

/** A real router over a sink that refuses, as Kafka refuses an oversized record, what `refuses` says. */
function refusingRouter(refuses: (topic: string, message: Message) => boolean) {
  const sent: { topic: string; message: Message }[] = [];
  const sink: RecordSink = {
    send: async (topic, message) => {
      if (refuses(topic, message)) throw new SideRecordRefusedError(topic, 'MESSAGE_TOO_LARGE');
      sent.push({ topic, message });
    },
  };
  const router = new Router({
    sink,
    metrics: new RetryMetrics(new Registry()),
    logger: createLogger({ name: 'record-guard-test', level: 'silent' }),
    tiersMs: [1_000],
    tierTopic: () => 'tier',
    topics: () => ({ redeliver: 'redeliver', deadLetter: 'dead', rejected: 'rejected' }),
    now: () => 0,
  });
  return { router, sent };
}

describe('guardRecord (retry service): a record Kafka refuses never stops its partition', () => {
  const state = retryState({ messageId: 'big-1' });
  const big = { ...retryMessage(state), key: Buffer.from('k'), topic: 'sluice.retry', partition: 2, offset: '9' };
  const schedule = (router: Router) => () => router.route(big, state, 60_000);

  it('a tier record Kafka refuses → the retry record goes to sluice.rejected (unprocessable), with its value', async () => {
    const { router, sent } = refusingRouter((topic) => topic === 'tier');
    await guardRecord(big as unknown as ConsumedRecord, router, schedule(router));
    assert.deepEqual(
      sent.map((s) => s.topic),
      ['rejected'],
    );
    const headers = sent[0]!.message.headers as Record<string, string>;
    assert.equal(headers[REJECT_HEADERS.code], 'unprocessable');
    assert.match(headers[REJECT_HEADERS.message]!, /SideRecordRefusedError: .*MESSAGE_TOO_LARGE/);
    assert.deepEqual(sent[0]!.message.value, big.value);
  });

  it('a rejected record Kafka refuses whole is written without its value, the reason in a header; nothing is thrown', async () => {
    const { router, sent } = refusingRouter(
      (topic, m) => topic === 'tier' || (topic === 'rejected' && m.value !== null),
    );
    await guardRecord(big as unknown as ConsumedRecord, router, schedule(router));
    assert.equal(sent.length, 1);
    const headers = sent[0]!.message.headers as Record<string, string>;
    assert.equal(sent[0]!.message.value, null);
    assert.equal(headers[REJECT_HEADERS.valueDropped], 'MESSAGE_TOO_LARGE');
    assert.equal(headers[REJECT_HEADERS.from], 'sluice.retry/2/9');
  });
});
