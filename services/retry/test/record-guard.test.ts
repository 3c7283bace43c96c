import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProducerThreadError, RecordBatcherClosedError, type ConsumedRecord } from '@sluice/kafka';
import { guardRecord } from '../src/adapters/record-guard.ts';
import type { Router } from '../src/adapters/router.ts';
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
