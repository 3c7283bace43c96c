import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../src/domain/decide.ts';
import { InvalidEndpointUrlError } from '../src/errors.ts';

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
