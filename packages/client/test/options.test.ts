import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import { Analytics, InvalidOptionError, LIBRARY_VERSION } from '../src/index.ts';
import type { AnalyticsOptions } from '../src/index.ts';
import { debugEnabled } from '../src/debug-log.ts';
import { resolveSettings } from '../src/options.ts';

describe('options', () => {
  it('has the documented defaults', () => {
    const s = resolveSettings('k', {}, {});
    assert.equal(s.url, 'http://localhost:8080/v1/batch');
    assert.equal(s.flushAt, 20);
    assert.equal(s.flushAfterMs, 5_000);
    assert.equal(s.maxRetries, 10);
    assert.equal(s.retryMinDelayMs, 100);
    assert.equal(s.retryMaxDelayMs, 10_000);
    assert.equal(s.timeoutMs, 15_000);
    assert.equal(s.maxInFlight, 4);
    assert.equal(s.maxQueueSize, 100_000);
    assert.equal(s.debug, false);
    assert.equal(s.authorization, 'Basic azo=');
  });

  it('takes size as flushAt', () => {
    assert.equal(resolveSettings('k', { size: 1 }, {}).flushAt, 1);
    assert.equal(resolveSettings('k', { size: 5, flushAt: 5 }, {}).flushAt, 5);
  });

  const invalid: Array<[string, string, AnalyticsOptions]> = [
    ['empty write key', '', {}],
    ['flushAt and size disagree', 'k', { flushAt: 2, size: 3 }],
    ['flushAt 0', 'k', { flushAt: 0 }],
    ['fractional flushAt', 'k', { flushAt: 1.5 }],
    ['negative maxRetries', 'k', { maxRetries: -1 }],
    ['zero flushAfter', 'k', { flushAfter: 0 }],
    ['NaN retryMinDelay', 'k', { retryMinDelay: Number.NaN }],
    ['maxInFlight 0', 'k', { maxInFlight: 0 }],
    ['endpoint not a URL', 'k', { endpoint: 'localhost:8080' }],
    ['endpoint not http', 'k', { endpoint: 'ftp://x.test' }],
    ['endpoint with query', 'k', { endpoint: 'http://x.test/?a=1' }],
    ['onError not a function', 'k', { onError: 'log' as never }],
  ];
  for (const [name, key, options] of invalid) {
    it(`refuses ${name} in the constructor`, () => {
      assert.throws(
        () => new Analytics(key, options),
        (err: unknown) => err instanceof InvalidOptionError && err.code === 'invalid_option',
      );
    });
  }

  it('reads DEBUG like the debug package', () => {
    for (const on of ['analytics', 'express,analytics', 'foo analytics', '*', 'analytics*', 'analytics:*'])
      assert.ok(debugEnabled(on), on);
    for (const off of [undefined, '', 'analytics-node', 'express', 'analyticsx'])
      assert.ok(!debugEnabled(off), String(off));
    assert.equal(resolveSettings('k', {}, { DEBUG: 'analytics' }).debug, true);
    assert.equal(resolveSettings('k', { debug: false }, { DEBUG: 'analytics' }).debug, false);
  });

  it('LIBRARY_VERSION matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(LIBRARY_VERSION, pkg.version);
  });
});
