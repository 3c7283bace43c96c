import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  batchBodyBytes,
  batchRequestHeaders,
  MAX_BATCH_RESULT_BYTES,
  parseBatchResult,
  renderBatchBody,
} from '../src/index.ts';

const items = [
  { messageId: 'm1', body: Buffer.from('{"type":"track","n":1.50}') },
  { messageId: 'm"2\u00e9', body: Buffer.from('{"type":"identify","traits":{"name":"Zo\u00eb"}}') },
];
const ids = new Set(['m1', 'm"2\u00e9']);
const json = 'application/json; charset=utf-8';

describe('batch body', () => {
  it('holds each event byte for byte as its own request would, and its ids in order', () => {
    const body = renderBatchBody('b-1', items);
    const doc = JSON.parse(body.toString()) as { batchId: string; messageIds: string[]; events: unknown[] };
    assert.equal(doc.batchId, 'b-1');
    assert.deepEqual(doc.messageIds, ['m1', 'm"2\u00e9']);
    for (const item of items) assert.ok(body.includes(item.body), 'event bytes kept exactly (1.50 stays 1.50)');
    assert.equal(body.indexOf(items[0]!.body) < body.indexOf(items[1]!.body), true);
    assert.deepEqual(
      [body.byteOffset, body.buffer.byteLength],
      [0, body.length],
      'all of its own memory (can move threads)',
    );
  });

  it('knows its exact length before it is written, for 0, 1 and many events', () => {
    for (const n of [0, 1, 2]) {
      const some = items.slice(0, n);
      assert.equal(batchBodyBytes(3, some), renderBatchBody('b-1', some).length, `${n} events`);
    }
  });

  it('names the batch instead of one message in its headers', () => {
    const headers = batchRequestHeaders({ url: 'https://r.example/', headers: { 'x-team': 't' } }, 'b-1', 2, {
      'x-signature': 'ab',
    });
    assert.equal(headers['x-batch-id'], 'b-1');
    assert.equal(headers['x-batch-size'], '2');
    assert.equal(headers['x-message-id'], undefined);
    assert.equal(headers['x-signature'], 'ab');
    assert.equal(headers['x-team'], 't');
  });
});

describe('per-event results of a 2xx answer', () => {
  const parse = (body: string, type = json) => parseBatchResult(type, Buffer.from(body), ids);

  it('settles every event when the answer says nothing per event', () => {
    assert.deepEqual(parseBatchResult(json, undefined, ids), { kind: 'all' });
    assert.deepEqual(parse(''), { kind: 'all' });
    assert.deepEqual(parse('ok', 'text/plain'), { kind: 'all' });
    assert.deepEqual(parse('{"received":2}'), { kind: 'all' });
    assert.deepEqual(parse('{"failed":[]}'), { kind: 'all' });
  });

  it('names only the failed events, with their status and error', () => {
    const result = parse('{"failed":[{"messageId":"m1","status":503,"error":"busy"},{"messageId":"m\\"2\u00e9"}]}');
    assert.equal(result.kind, 'partial');
    if (result.kind !== 'partial') return;
    assert.deepEqual(result.failed.get('m1'), { status: 503, error: 'busy' });
    assert.deepEqual(result.failed.get('m"2\u00e9'), {});
    assert.equal(result.failed.size, 2);
  });

  it('cuts a long error', () => {
    const result = parse(JSON.stringify({ failed: [{ messageId: 'm1', status: 400, error: 'x'.repeat(5000) }] }));
    assert.equal(result.kind === 'partial' && result.failed.get('m1')?.error?.length, 200);
  });

  it('calls a result it cannot read malformed: the whole batch fails', () => {
    for (const body of [
      '{"failed":',
      '[]',
      '"x"',
      'null',
      '{"failed":{}}',
      '{"failed":[1]}',
      '{"failed":[{"status":500}]}',
      '{"failed":[{"messageId":"other"}]}',
      '{"failed":[{"messageId":"m1","status":200}]}',
      '{"failed":[{"messageId":"m1","status":503.5}]}',
      '{"failed":[{"messageId":"m1","error":7}]}',
    ]) {
      const result = parse(body);
      assert.equal(result.kind, 'malformed', body);
      assert.match(result.kind === 'malformed' ? result.error : '', /^batch_result_malformed: /);
    }
    const long = Buffer.alloc(MAX_BATCH_RESULT_BYTES + 1, 0x20);
    assert.equal(parseBatchResult(json, long, ids).kind, 'malformed');
    assert.equal(parseBatchResult(json, Buffer.from('{}'), ids, true).kind, 'malformed');
  });
});
