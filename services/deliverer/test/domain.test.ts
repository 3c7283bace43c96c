import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testRetryState } from '@sluice/testkit';
import type { AttemptResult } from '../src/transport/attempt-result.ts';
import { classifyError, classifyStatus } from '../src/transport/classify.ts';
import { decide } from '../src/attempt/decide.ts';
import { stateAfterAttempt, type DeliveryJob } from '../src/intake/delivery-job.ts';
import { parseRetryAfter } from '../src/transport/retry-after.ts';
import { AddressPolicy, DeliveryTimeoutError, InvalidEndpointUrlError, SsrfBlockedError } from '@sluice/webhook';

const NOW = Date.parse('2026-11-21T12:00:00.000Z');

describe('classifyStatus', () => {
  const table: [number, string, string | undefined][] = [
    [200, 'success', undefined],
    [204, 'success', undefined],
    [299, 'success', undefined],
    [301, 'permanent', 'http_301'],
    [302, 'permanent', 'http_302'],
    [400, 'permanent', 'http_400'],
    [404, 'permanent', 'http_404'],
    [408, 'retryable', 'http_408'],
    [429, 'retryable', 'http_429'],
    [500, 'retryable', 'http_500'],
    [503, 'retryable', 'http_503'],
    [599, 'retryable', 'http_599'],
  ];
  for (const [status, outcome, error] of table) {
    it(`${status} → ${outcome}`, () => {
      const c = classifyStatus(status, undefined, NOW);
      assert.equal(c.outcome, outcome);
      assert.equal(c.error, error);
    });
  }
  it('honours Retry-After on 429 and 503 only', () => {
    assert.equal(classifyStatus(429, '7', NOW).retryAfterMs, 7_000);
    assert.equal(classifyStatus(503, new Date(NOW + 30_000).toUTCString(), NOW).retryAfterMs, 30_000);
    assert.equal(classifyStatus(500, '7', NOW).retryAfterMs, undefined);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds, HTTP dates, and ignores junk', () => {
    assert.equal(parseRetryAfter('0', NOW), 0);
    assert.equal(parseRetryAfter('120', NOW), 120_000);
    assert.equal(parseRetryAfter(new Date(NOW - 5_000).toUTCString(), NOW), 0);
    assert.equal(parseRetryAfter('soon', NOW), undefined);
    assert.equal(parseRetryAfter(undefined, NOW), undefined);
  });
});

describe('classifyError', () => {
  const err = (code: string) => Object.assign(new Error(code), { code });
  const table: [string, unknown, string, string][] = [
    ['timeout', new DeliveryTimeoutError(5_000), 'retryable', 'timeout'],
    ['ssrf', new SsrfBlockedError('10.0.0.1', 'private'), 'permanent', 'ssrf_blocked'],
    ['invalid url', new InvalidEndpointUrlError('ftp://x'), 'permanent', 'invalid_url'],
    ['refused', err('ECONNREFUSED'), 'retryable', 'ECONNREFUSED'],
    ['reset', err('ECONNRESET'), 'retryable', 'ECONNRESET'],
    ['dns', err('ENOTFOUND'), 'retryable', 'ENOTFOUND'],
    ['undici socket', err('UND_ERR_SOCKET'), 'retryable', 'UND_ERR_SOCKET'],
    ['self-signed', err('DEPTH_ZERO_SELF_SIGNED_CERT'), 'permanent', 'DEPTH_ZERO_SELF_SIGNED_CERT'],
    ['bad altname', err('ERR_TLS_CERT_ALTNAME_INVALID'), 'permanent', 'ERR_TLS_CERT_ALTNAME_INVALID'],
    ['ssl handshake', err('ERR_SSL_WRONG_VERSION_NUMBER'), 'permanent', 'ERR_SSL_WRONG_VERSION_NUMBER'],
    ['undici invalid argument', err('UND_ERR_INVALID_ARG'), 'permanent', 'invalid_request'],
    ['node invalid header char', err('ERR_INVALID_CHAR'), 'permanent', 'invalid_request'],
    ['node invalid header value', err('ERR_HTTP_INVALID_HEADER_VALUE'), 'permanent', 'invalid_request'],
    ['unknown', new Error('???'), 'retryable', 'network_error'],
  ];
  for (const [name, error, outcome, code] of table) {
    it(`${name} → ${outcome} (${code})`, () => assert.deepEqual(classifyError(error), { outcome, error: code }));
  }
});

describe('decide', () => {
  const r = (
    endpoint: string,
    outcome: AttemptResult['outcome'],
    extra: Partial<AttemptResult> = {},
  ): AttemptResult => ({ endpoint, outcome, at: NOW, latencyMs: 1, ...extra });
  it('any success delivers', () => {
    assert.deepEqual(decide([r('a', 'retryable'), r('b', 'permanent'), r('c', 'success')]), { kind: 'delivered' });
  });
  it('retries only the endpoints whose failure was retryable, with the longest Retry-After', () => {
    const d = decide([
      r('a', 'retryable', { error: 'http_500' }),
      r('b', 'permanent', { error: 'http_404' }),
      r('c', 'retryable', { error: 'http_429', retryAfterMs: 9_000 }),
    ]);
    assert.equal(d.kind, 'retry');
    assert.deepEqual(d.kind === 'retry' && d.endpoints, ['a', 'c']);
    assert.equal(d.kind === 'retry' && d.retryAfterMs, 9_000);
  });
  it('all permanent dead-letters at once', () => {
    assert.equal(decide([r('a', 'permanent'), r('b', 'permanent')]).kind, 'dead');
  });
  it('no endpoints dead-letters as no_endpoints', () => {
    assert.deepEqual(decide([]), { kind: 'dead', reason: 'no_endpoints' });
  });
});

describe('stateAfterAttempt', () => {
  const job: DeliveryJob = {
    key: 'k',
    body: Buffer.from('{}'),
    messageId: 'm',
    sourceId: 's',
    destinationId: 'd',
    eventType: 'track',
    receivedAt: '2026-01-01T00:00:00.000Z',
    endpoints: ['a'],
  };
  const rec = { attempt: 1, endpoint: 'a', at: NOW, outcome: 'retryable' as const, latencyMs: 3 };
  it('first attempt starts the window and the history', () => {
    const s = stateAfterAttempt(job, NOW, { records: [rec], endpoints: ['a'], lastError: 'x' });
    assert.equal(s.attempts, 1);
    assert.equal(s.firstAttemptAt, NOW);
    assert.deepEqual(s.history, [rec]);
    assert.equal(s.receivedAt, job.receivedAt);
  });
  it('a redelivery keeps the first attempt time and appends', () => {
    const previous = testRetryState({
      endpoints: ['a'],
      firstAttemptAt: NOW - 60_000,
      attempts: 2,
      history: [rec, { ...rec, attempt: 2 }],
      receivedAt: 'r',
      windowMs: 1_000,
    });
    const s = stateAfterAttempt({ ...job, receivedAt: undefined, previous }, NOW, {
      records: [{ ...rec, attempt: 3 }],
      endpoints: ['a'],
    });
    assert.equal(s.attempts, 3);
    assert.equal(s.firstAttemptAt, NOW - 60_000);
    assert.equal(s.history.length, 3);
    assert.equal(s.receivedAt, 'r');
    assert.equal(s.windowMs, 1_000);
  });
});

describe('AddressPolicy (docs/reference/security.md)', () => {
  const guard = new AddressPolicy({ enabled: true, allowCidrs: [] });
  const refused = [
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '[::1]',
    'fe80::1%eth0',
    'fc00::1',
    'ff02::1',
    '2002:0a00:0001::1',
    'not-an-ip',
    // cloud metadata and host agents
    '168.63.129.16',
    '::ffff:168.63.129.16',
    '64:ff9b::a83f:8110',
    'fd00:ec2::254',
    'fd20:ce::254',
    '100.100.100.200',
    '169.254.0.23',
    '192.0.0.192',
  ];
  for (const a of refused) it(`refuses ${a}`, () => assert.equal(guard.check(a).allowed, false));
  const allowed = ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '168.63.129.17'];
  for (const a of allowed) it(`allows ${a}`, () => assert.equal(guard.check(a).allowed, true));
  it('the allow-list opens a range, including IPv4-mapped forms', () => {
    const open = new AddressPolicy({ enabled: true, allowCidrs: ['127.0.0.0/8'] });
    assert.equal(open.check('127.0.0.1').allowed, true);
    assert.equal(open.check('::ffff:127.0.0.1').allowed, true);
    assert.equal(open.check('10.0.0.1').allowed, false);
    assert.equal(open.check('::1').allowed, false);
  });
  it("Azure's WireServer is refused as `metadata`, in both notations; an allow-list naming it opens it", () => {
    assert.deepEqual(guard.check('168.63.129.16'), { allowed: false, range: 'metadata' });
    assert.deepEqual(guard.check('::ffff:a83f:8110'), { allowed: false, range: 'metadata' });
    assert.equal(
      new AddressPolicy({ enabled: true, allowCidrs: ['168.63.129.16/32'] }).check('168.63.129.16').allowed,
      true,
    );
  });
  it('disabled allows everything', () =>
    assert.equal(new AddressPolicy({ enabled: false, allowCidrs: [] }).check('127.0.0.1').allowed, true));
});
