import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../src/attempt/decide.ts';
import { InvalidEndpointUrlError } from '@sluice/webhook';

const SECRET_URL = 'https://user:pass@hooks.example/in?token=tok3n';

test('lastError names endpoints with userinfo and query redacted; the retry list keeps the real URL', () => {
  const retry = decide([{ endpoint: SECRET_URL, outcome: 'retryable', at: 0, latencyMs: 1, error: 'http_503' }]);
  assert.ok(retry.kind === 'retry');
  assert.equal(retry.lastError, 'https://***@hooks.example/in?***: http_503');
  assert.deepEqual(retry.endpoints, [SECRET_URL]);
  const dead = decide([{ endpoint: SECRET_URL, outcome: 'permanent', at: 0, latencyMs: 1, error: 'http_410' }]);
  assert.ok(dead.kind === 'dead');
  assert.doesNotMatch(dead.lastError ?? '', /pass|tok3n/);
});

test('an invalid endpoint URL is named redacted in its error', () => {
  assert.doesNotMatch(new InvalidEndpointUrlError('ftp://user:pass@h/?token=tok3n').message, /pass|tok3n/);
});

test('endpoints held back are named redacted in lastError, whatever the reason and whether others were tried', async () => {
  const { decidePart } = await import('../src/attempt/part-decision.ts');
  const reasons = ['circuit_open', 'retry_after', 'rate_limited', 'destination_stalled'] as const;
  for (const reason of reasons) {
    const held = [{ endpoint: SECRET_URL, reason, until: 0 }];
    const alone = decidePart([], held);
    assert.ok(alone.kind === 'defer');
    assert.equal(alone.lastError, `https://***@hooks.example/in?***: ${reason}`);
    const failed = { endpoint: 'https://a:b@other.example/?k=v', outcome: 'permanent' as const, at: 0, latencyMs: 1 };
    const beside = decidePart([{ ...failed, error: 'http_410' }], held);
    assert.ok(beside.kind === 'retry');
    assert.doesNotMatch(beside.lastError, /pass|tok3n|a:b|k=v/);
  }
});
