import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createJsonCodec } from '@sluice/codec';
import { track } from './fixtures.ts';

const codec = createJsonCodec();
describe('JSON envelope codec', () => {
  it('round-trips an envelope', async () => {
    const decoded = await codec.decode(await codec.encode(track as never));
    assert.ok(decoded.ok);
    assert.deepEqual(decoded.envelope, track);
  });

  const bad: [string, Buffer | null, string][] = [
    ['empty', null, 'empty'],
    ['not JSON', Buffer.from('{nope'), 'not_json'],
    ['track without event', Buffer.from(JSON.stringify({ ...track, event: undefined })), 'invalid_envelope'],
    ['no identity', Buffer.from(JSON.stringify({ ...track, userId: undefined })), 'invalid_envelope'],
    ['unknown type', Buffer.from(JSON.stringify({ ...track, type: 'purchase' })), 'invalid_envelope'],
    ['alias without previousId', Buffer.from(JSON.stringify({ ...track, type: 'alias' })), 'invalid_envelope'],
    ['framed without registry', Buffer.from([0, 0, 0, 0, 7, 0x7b, 0x7d]), 'registry_unavailable'],
  ];
  for (const [name, value, code] of bad) {
    it(`rejects ${name} as ${code}`, async () => {
      const r = await codec.decode(value);
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.code, code);
    });
  }
});
