import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BatchSettings } from '@sluice/config';
import { batchBodyBytes, batchItemBytes, renderBatchBody, type BatchItem } from '@sluice/webhook';
import type { AttemptResult } from '../src/transport/attempt-result.ts';
import { BatchComposer } from '../src/attempt/batching/batch-composer.ts';
import { BATCH_ITEM_FAILED, batchEventResults } from '../src/attempt/batching/batch-outcome.ts';

const ID = '00000000-0000-4000-8000-000000000000';
const item = (n: number, bytes = 20): BatchItem => ({
  messageId: `m-${n}`,
  body: Buffer.from(`{"n":${JSON.stringify('x'.repeat(Math.max(0, bytes - 8)))}}`),
});
const limits = (over: Partial<BatchSettings> = {}): BatchSettings => ({
  maxEvents: 100,
  maxBytes: 1024 * 1024,
  maxWaitMs: 50,
  ...over,
});

describe('BatchComposer: a batch leaves at each limit, exactly at its edge (injected clock)', () => {
  const add = (c: BatchComposer<BatchItem>, i: BatchItem, l: BatchSettings, now = 0, key = 'd') =>
    c.add({ key, item: i, bytes: batchItemBytes(i) }, l, now);

  it('maxEvents: the Nth event sends the batch, the N-1th does not', () => {
    const c = new BatchComposer<BatchItem>(ID.length);
    const l = limits({ maxEvents: 3 });
    assert.deepEqual(add(c, item(1), l), []);
    assert.deepEqual(add(c, item(2), l), []);
    const [batch, ...rest] = add(c, item(3), l);
    assert.deepEqual(rest, []);
    assert.deepEqual(
      batch!.items.map((i) => i.messageId),
      ['m-1', 'm-2', 'm-3'],
    );
    assert.equal(c.nextDueAt(), undefined, 'nothing left open');
    assert.equal(add(c, item(4), limits({ maxEvents: 1 })).length, 1, 'maxEvents 1: every event alone');
  });

  it('maxBytes: a batch that fills to exactly maxBytes leaves; one byte more and the event opens the next batch', () => {
    const [a, b] = [item(1, 300), item(2, 300)];
    const exact = batchBodyBytes(ID.length, [a, b]);
    const c = new BatchComposer<BatchItem>(ID.length);
    assert.deepEqual(add(c, a, limits({ maxBytes: exact })), []);
    const [full] = add(c, b, limits({ maxBytes: exact }));
    assert.equal(full!.items.length, 2);
    assert.equal(full!.bytes, exact);
    assert.equal(full!.bytes, renderBatchBody(ID, [a, b]).length, 'the size is the rendered body, byte for byte');

    const d = new BatchComposer<BatchItem>(ID.length);
    assert.deepEqual(add(d, a, limits({ maxBytes: exact - 1 })), []);
    const [first] = add(d, b, limits({ maxBytes: exact - 1 }));
    assert.deepEqual(
      first!.items.map((i) => i.messageId),
      ['m-1'],
      'b would pass maxBytes: the open batch leaves without it',
    );
    assert.equal(first!.bytes, renderBatchBody(ID, [a]).length);
    assert.deepEqual(
      d.drain().map((x) => x.items.map((i) => i.messageId)),
      [['m-2']],
      'b opened the next batch',
    );
  });

  it('an event larger than maxBytes alone goes as a batch of one, after the open batch', () => {
    const c = new BatchComposer<BatchItem>(ID.length);
    const l = limits({ maxBytes: 1024 });
    assert.deepEqual(add(c, item(1), l), []);
    const left = add(c, item(2, 2_000), l);
    assert.deepEqual(
      left.map((x) => x.items.map((i) => i.messageId)),
      [['m-1'], ['m-2']],
    );
    assert.ok(left[1]!.bytes > 1024);
    assert.equal(c.nextDueAt(), undefined);
  });

  it('maxWait: due at maxWait after its first event, not one ms before; keys batch apart', () => {
    const c = new BatchComposer<BatchItem>(ID.length);
    const l = limits({ maxWaitMs: 50 });
    add(c, item(1), l, 1_000, 'd-a');
    add(c, item(2), l, 1_030, 'd-a');
    add(c, item(3), limits({ maxWaitMs: 10 }), 1_020, 'd-b');
    assert.equal(c.nextDueAt(), 1_030);
    assert.deepEqual(c.due(1_029), []);
    assert.deepEqual(
      c.due(1_030).map((x) => x.key),
      ['d-b'],
    );
    assert.deepEqual(c.due(1_049), []);
    const [late] = c.due(1_050);
    assert.deepEqual(
      late!.items.map((i) => i.messageId),
      ['m-1', 'm-2'],
      'the later event does not extend the wait',
    );
    assert.equal(c.nextDueAt(), undefined);
  });
});

describe('batchEventResults: each event of a batch gets its own result from the answer', () => {
  const ids = ['a', 'b', 'c', 'd'];
  const base = { endpoint: 'http://r.example/hook', at: 1, latencyMs: 2 };
  const ok = (contentType: string | undefined, body: string): AttemptResult => ({
    ...base,
    outcome: 'success',
    status: 200,
    answer: { truncated: false, body: new Uint8Array(Buffer.from(body)), ...(contentType && { contentType }) },
  });

  it('a non-2xx answer is every event result; no answer field leaks into it', () => {
    const failed: AttemptResult = { ...base, outcome: 'retryable', status: 503, error: 'http_503' };
    const results = batchEventResults(failed, ids, 0);
    assert.equal(results.length, 4);
    for (const r of results) assert.deepEqual(r, failed);
  });

  it('a 2xx without per-event results delivers every event (empty, text, JSON without failed)', () => {
    for (const answer of [ok(undefined, ''), ok('text/plain', 'ok'), ok('application/json', '{"received":4}')]) {
      const results = batchEventResults(answer, ids, 0);
      for (const r of results) {
        assert.equal(r.outcome, 'success');
        assert.equal(r.answer, undefined);
        assert.equal(r.responseSnippet, undefined);
      }
    }
  });

  it('failed ids: 5xx/429 or no status retryable, other 4xx permanent, the rest delivered', () => {
    const failed = [
      { messageId: 'a', status: 503 },
      { messageId: 'b', status: 400, error: 'bad payload' },
      { messageId: 'c' },
    ];
    const results = batchEventResults(ok('application/json; charset=utf-8', JSON.stringify({ failed })), ids, 0);
    assert.deepEqual(
      results.map((r) => [r.outcome, r.status, r.error]),
      [
        ['retryable', 503, 'http_503'],
        ['permanent', 400, 'http_400'],
        ['retryable', undefined, BATCH_ITEM_FAILED],
        ['success', 200, undefined],
      ],
    );
    assert.equal(results[1]!.responseSnippet, 'bad payload');
  });

  it('a malformed result fails the whole batch, retryably', () => {
    for (const body of ['{"failed":"a"}', '{"failed":[{"messageId":"zz"}]}', 'not json']) {
      const results = batchEventResults(ok('application/json', body), ids, 0);
      for (const r of results) {
        assert.equal(r.outcome, 'retryable');
        assert.match(r.error ?? '', /^batch_result_malformed: /);
      }
    }
    const cut: AttemptResult = { ...ok('application/json', '{"failed":[]}'), answer: { truncated: true } };
    cut.answer!.body = new Uint8Array(Buffer.from('{"failed":['));
    cut.answer!.contentType = 'application/json';
    assert.match(batchEventResults(cut, ids, 0)[0]!.error ?? '', /longer than/);
  });
});
