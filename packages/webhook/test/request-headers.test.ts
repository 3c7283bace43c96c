import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { requestHeaders } from '../src/request-headers.ts';

describe('requestHeaders', () => {
  it('sets the fixed headers and keeps static ones', () => {
    const h = requestHeaders({ url: 'https://x', headers: { 'X-Team': 'a' } }, 'm-1', { 'x-signature': 'abc' });
    assert.deepEqual(h, {
      'X-Team': 'a',
      'user-agent': 'Sluice/1.0',
      'content-type': 'application/json',
      'x-message-id': 'm-1',
      'x-signature': 'abc',
    });
    assert.equal('x-signature' in requestHeaders({ url: 'https://x', headers: {} }, 'm-1', undefined), false);
  });
});
