// The drills' ledger counts what each destination got: single requests and batches alike, every
// event of a batch checked on its own, the signature over the whole batch.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderBatchBody } from '@sluice/webhook';
import { signBody } from '@sluice/webhook-signature';
import { Ledger, ledgerProperties, overtakes, type Arrival } from '../support/ledger.ts';

const SECRET = 's3cret';
const event = (id: string, seq: number) =>
  Buffer.from(JSON.stringify({ messageId: id, properties: ledgerProperties(seq) }));
const request = (body: Buffer, headers: Record<string, string>, at = 1) => ({
  method: 'POST',
  path: '/',
  headers: { ...headers, 'x-signature': signBody(SECRET, body) },
  body,
  at,
});

describe('the drills ledger', () => {
  it('counts each event of a batch, per destination, and what one destination misses is lost', () => {
    const ledger = new Ledger(SECRET);
    ledger.recording('http://single/', undefined, 'single');
    ledger.recording('http://batched/', undefined, 'batched');
    for (const id of ['a', 'b', 'c']) ledger.acked.add(id);
    for (const [i, id] of ['a', 'b', 'c'].entries())
      ledger.log('http://single/', request(event(id, i), { 'x-message-id': id }), 200, 'single');
    const batch = renderBatchBody('batch-1', [
      { messageId: 'a', body: event('a', 0) },
      { messageId: 'b', body: event('b', 1) },
    ]);
    ledger.log('http://batched/', request(batch, { 'x-batch-id': 'batch-1' }), 200, 'batched');
    let summary = ledger.summary();
    assert.equal(summary.delivered, 2, 'a and b reached both destinations');
    assert.equal(summary.lost, 1, 'c is missing at the batched destination');
    assert.deepEqual(ledger.missing(), ['c']);
    assert.equal(summary.badSignatures, 0);
    assert.equal(summary.badBodies, 0);

    ledger.log(
      'http://batched/',
      request(renderBatchBody('batch-2', [{ messageId: 'c', body: event('c', 2) }]), { 'x-batch-id': 'batch-2' }),
      200,
      'batched',
    );
    summary = ledger.summary();
    assert.equal(summary.lost, 0);
    assert.equal(summary.delivered, 3);
  });

  it('flags a batch whose signature or events do not check out', () => {
    const ledger = new Ledger(SECRET);
    const body = renderBatchBody('b', [
      { messageId: 'a', body: Buffer.from('{"properties":{"payload":"x","hash":"y"}}') },
    ]);
    ledger.log(
      'http://batched/',
      { ...request(body, { 'x-batch-id': 'b' }), body: Buffer.concat([body, Buffer.from(' ')]) },
      200,
    );
    ledger.log('http://batched/', request(Buffer.from('{"messageIds":["a"],"events":[]}'), { 'x-batch-id': 'c' }), 200);
    const summary = ledger.summary();
    assert.equal(summary.badSignatures, 1);
    assert.equal(summary.badBodies, 2);
  });
});

describe('the drills order check', () => {
  const arrival = (messageId: string, status = 200): Arrival => ({
    messageId,
    destination: 'd',
    endpoint: 'http://d/',
    at: 1,
    status,
    bodyOk: true,
    signatureOk: true,
  });
  const positions = new Map([
    ['a', { partition: 0, offset: 0 }],
    ['b', { partition: 0, offset: 1 }],
    ['c', { partition: 0, offset: 2 }],
    ['x', { partition: 1, offset: 0 }],
  ]);

  it('arrival order per partition is no overtake, whatever the other partitions do', () => {
    const got = overtakes(
      ['x', 'a', 'b', 'c'].map((id) => arrival(id)),
      'd',
      positions,
    );
    assert.deepEqual(got, { events: 4, maxOvertake: 0, overtaken: 0 });
  });

  it('counts how far an event was overtaken, by its first 2xx only', () => {
    const got = overtakes([arrival('a', 503), arrival('c'), arrival('b'), arrival('a'), arrival('c')], 'd', positions);
    assert.deepEqual(got, { events: 3, maxOvertake: 2, overtaken: 2 });
  });
});
