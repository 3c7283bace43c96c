import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type ConsumedRecord, ownedRecord } from '@sluice/kafka';

it('an owned record holds copies of its key, value and headers, not views of the fetch response', () => {
  // A fetch response of its own (not from Node's small-buffer pool, as kafkajs's are).
  const response = Buffer.alloc(12);
  response.write('kkkvvvvvhhhh');
  const fetched: ConsumedRecord = {
    topic: 't',
    partition: 1,
    offset: '7',
    key: response.subarray(0, 3),
    value: response.subarray(3, 8),
    headers: { a: response.subarray(8, 12), b: 'text', c: [response.subarray(8, 10), 'x'] },
    timestamp: 5,
  };
  const owned = ownedRecord(fetched);
  assert.deepEqual(owned, fetched, 'the same record');
  const views = [owned.key, owned.value, owned.headers.a, (owned.headers.c as unknown[])[0]] as Buffer[];
  for (const view of views) assert.notEqual(view.buffer, response.buffer, 'its own memory');
  response.fill(0);
  assert.equal(owned.value!.toString(), 'vvvvv');
  assert.equal(ownedRecord({ ...fetched, key: null, value: null }).value, null);
});
