import { test } from 'node:test';
import assert from 'node:assert/strict';
import { packBatch, reviveCloned, unpackBatch } from '../src/record-packing.ts';

test('packBatch/unpackBatch round-trip keys and values of several topics, byte for byte', () => {
  const input = [
    {
      topic: 'events',
      messages: [
        { key: 'src:ü-user', value: Buffer.from('{"a":"é"}') },
        { key: null, value: Buffer.alloc(0) },
        { key: Buffer.from([0, 255]), value: '{"s":1}' },
        { key: 'k', value: 'v', headers: { traceparent: '00-ab-cd-01', tracestate: 'é=1' } },
      ],
    },
    { topic: 'other', messages: [{ key: 'k', value: Buffer.from('x'.repeat(70_000)) }] },
  ];
  const packed = packBatch(input)!;
  assert.ok(packed.data instanceof ArrayBuffer);
  // Transfer detaches the buffer in the sender, as postMessage will.
  const moved = structuredClone(packed, { transfer: [packed.data] });
  const out = unpackBatch(moved);
  assert.deepEqual(
    out.map((t) => [t.topic, t.messages.length]),
    [
      ['events', 4],
      ['other', 1],
    ],
  );
  assert.ok(Buffer.isBuffer(out[0]!.messages[0]!.value));
  assert.equal((out[0]!.messages[0]!.key as Buffer).toString(), 'src:ü-user');
  assert.equal((out[0]!.messages[0]!.value as Buffer).toString(), '{"a":"é"}');
  assert.equal(out[0]!.messages[1]!.key, null);
  assert.equal((out[0]!.messages[1]!.value as Buffer).length, 0);
  assert.deepEqual([...(out[0]!.messages[2]!.key as Buffer)], [0, 255]);
  assert.equal((out[0]!.messages[2]!.value as Buffer).toString(), '{"s":1}');
  assert.deepEqual(out[0]!.messages[3]!.headers, { traceparent: '00-ab-cd-01', tracestate: 'é=1' });
  assert.equal(out[0]!.messages[0]!.headers, undefined);
  assert.equal((out[1]!.messages[0]!.value as Buffer).length, 70_000);
});

test('tombstones and records for a given partition pack too: a batch of state records beside others is not cloned', () => {
  const input = [
    {
      topic: 'sluice.ordering',
      messages: [
        { key: 'ord/s:u1', value: '{"v":2}', partition: 2 },
        { key: 'ord/s:u2', value: null, partition: 0 },
        { key: 'k', value: null },
      ],
    },
    { topic: 'waiting', messages: [{ key: 's:u1', value: Buffer.from('body'), headers: { 'sluice-ordering': '{}' } }] },
  ];
  const packed = packBatch(input);
  assert.ok(packed, 'packed');
  const out = unpackBatch(structuredClone(packed, { transfer: [packed.data] }));
  const [state, waiting] = out;
  assert.equal((state!.messages[0]!.value as Buffer).toString(), '{"v":2}');
  assert.equal(state!.messages[0]!.partition, 2);
  assert.equal(state!.messages[1]!.value, null, 'a tombstone stays one');
  assert.equal(state!.messages[1]!.partition, 0);
  assert.equal(state!.messages[2]!.value, null);
  assert.equal('partition' in state!.messages[2]!, false, "no partition given: the partitioner's choice");
  assert.equal((waiting!.messages[0]!.value as Buffer).toString(), 'body');
  assert.deepEqual(waiting!.messages[0]!.headers, { 'sluice-ordering': '{}' });
});

test('records with Buffer header values (or a timestamp) do not pack; cloned ones get Buffers back', () => {
  const withHeaders = [
    {
      topic: 'rejected',
      messages: [
        { key: null, value: Buffer.from('{"x":1}'), headers: { code: 'invalid_call', raw: Buffer.from('b') } },
      ],
    },
  ];
  assert.equal(packBatch(withHeaders), undefined);
  assert.equal(packBatch([{ topic: 't', messages: [{ key: 'k', value: 'v', timestamp: '1' }] }]), undefined);
  const cloned = reviveCloned(structuredClone(withHeaders));
  const m = cloned[0]!.messages[0]!;
  assert.ok(Buffer.isBuffer(m.value), 'a cloned Buffer arrives as Uint8Array; kafkajs would write String(value)');
  assert.equal((m.value as Buffer).toString(), '{"x":1}');
  assert.equal(m.headers!.code, 'invalid_call');
  assert.ok(Buffer.isBuffer(m.headers!.raw));
});

test('packBatch grows its buffer for text longer in UTF-8 than in UTF-16 units, anywhere in the batch', () => {
  const samples = [
    'ascii only',
    'é',
    '日本語のテキスト',
    '😀 two units, four bytes',
    'x'.repeat(1000),
    `${'é'.repeat(500)}😀`,
    '',
  ];
  const messages = Array.from({ length: 60 }, (_, i) => ({
    key: i % 5 === 0 ? null : samples[(i + 3) % samples.length]!,
    value: samples[i % samples.length]! + samples[(i * 7) % samples.length]!,
  }));
  const roundTrip = (batch: { key: string | null; value: string }[]) =>
    unpackBatch(packBatch([{ topic: 't', messages: batch }])!)[0]!.messages.map((m) => ({
      key: m.key === null ? null : (m.key as Buffer).toString(),
      value: (m.value as Buffer).toString(),
    }));
  assert.deepEqual(roundTrip(messages), messages);
  // The last string fits in UTF-16 units but not in UTF-8: its write stops short and is redone.
  for (const last of [[{ key: null, value: 'é' }], [{ key: 'ü', value: '😀' }]])
    assert.deepEqual(roundTrip(last), last);
});
