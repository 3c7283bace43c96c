import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DestinationCap,
  PATIENCE_FACTOR,
  STALL_EVIDENCE,
  UNPROVEN_IN_FLIGHT,
  type Progress,
} from '../src/transport/destination-cap.ts';
import type { AttemptResult } from '../src/transport/attempt-result.ts';
import { CircuitBreaker } from '../src/attempt/circuit-breaker.ts';
import { deferralWaitMs } from '../src/attempt/deferral.ts';
import { breakerResult, EndpointGate } from '../src/attempt/endpoint-gate.ts';
import { decidePart } from '../src/attempt/part-decision.ts';

const settings = { failureThreshold: 3, cooldownMs: 1_000 };
const timeout = { outcome: 'retryable', error: 'timeout' } as const;
const http500 = { outcome: 'retryable', status: 500, error: 'http_500' } as const;
const ok = { outcome: 'success', status: 200 } as const;

describe('circuit breaker (pure, clock passed in)', () => {
  it('opens after N consecutive failures, not before', () => {
    const b = new CircuitBreaker(settings);
    assert.equal(b.record('failed', 'normal', 0), undefined);
    assert.equal(b.record('failed', 'normal', 1), undefined);
    assert.deepEqual(b.admit(2), { kind: 'send' });
    assert.equal(b.record('failed', 'normal', 2), 'opened');
    assert.deepEqual(b.state, { kind: 'open', until: 1_002 });
    assert.deepEqual(b.admit(500), { kind: 'open', until: 1_002 });
  });

  it('an answer in between resets the count', () => {
    const b = new CircuitBreaker(settings);
    b.record('failed', 'normal', 0);
    b.record('failed', 'normal', 1);
    b.record('answered', 'normal', 2);
    b.record('failed', 'normal', 3);
    b.record('failed', 'normal', 4);
    assert.equal(b.state.kind, 'closed');
    assert.equal(b.record('failed', 'normal', 5), 'opened');
  });

  it('after the cool-down lets exactly one probe through; its answer closes the breaker', () => {
    const b = new CircuitBreaker(settings);
    for (let i = 0; i < 3; i += 1) b.record('failed', 'normal', 0);
    assert.deepEqual(b.admit(999), { kind: 'open', until: 1_000 });
    assert.deepEqual(b.admit(1_000), { kind: 'probe' });
    assert.equal(b.admit(1_001).kind, 'open', 'others wait while the probe is out');
    // A request sent before the breaker opened says nothing about the endpoint now.
    assert.equal(b.record('answered', 'normal', 1_002), undefined);
    assert.equal(b.state.kind, 'half-open');
    assert.equal(b.record('answered', 'probe', 1_003), 'closed');
    assert.deepEqual(b.admit(1_004), { kind: 'send' });
  });

  it('a failed probe opens it for another cool-down', () => {
    const b = new CircuitBreaker(settings);
    for (let i = 0; i < 3; i += 1) b.record('failed', 'normal', 0);
    assert.equal(b.admit(1_500).kind, 'probe');
    assert.equal(b.record('failed', 'probe', 1_600), 'opened');
    assert.deepEqual(b.admit(2_599), { kind: 'open', until: 2_600 });
    assert.equal(b.admit(2_600).kind, 'probe');
  });

  it('a probe given back (never sent) lets the next request probe', () => {
    const b = new CircuitBreaker(settings);
    for (let i = 0; i < 3; i += 1) b.record('failed', 'normal', 0);
    assert.equal(b.admit(1_000).kind, 'probe');
    b.cancelProbe();
    assert.equal(b.admit(1_001).kind, 'probe');
  });

  it('counts only timeouts and connection failures, not HTTP answers of any status', () => {
    assert.equal(breakerResult(timeout), 'failed');
    assert.equal(breakerResult({ outcome: 'retryable' }), 'failed', 'ECONNREFUSED, reset, DNS: no status');
    assert.equal(breakerResult(http500), 'answered');
    assert.equal(breakerResult({ outcome: 'permanent', status: 404 }), 'answered');
    assert.equal(breakerResult(ok), 'answered');
  });

  it('a timeout spent mostly queued for one of its own pooled connections does not count; one on the wire does', () => {
    const queued = { ...timeout, latencyMs: 5_000, connectionWaitMs: 4_200 };
    const neverWired = { ...timeout, latencyMs: 5_000, connectionWaitMs: 5_000 };
    const onTheWire = { ...timeout, latencyMs: 5_000, connectionWaitMs: 1_000 };
    assert.equal(breakerResult(queued), 'unsent');
    assert.equal(breakerResult(neverWired), 'unsent');
    assert.equal(breakerResult(onTheWire), 'failed', 'the endpoint held it for 4 s of 5');
    assert.equal(breakerResult({ outcome: 'retryable', latencyMs: 10, connectionWaitMs: 9 }), 'failed', 'refused');
    const gate = new EndpointGate({ ...settings, maxHoldMs: 60_000 });
    for (let i = 0; i < 10; i += 1) gate.record(queued, 'normal', i);
    assert.deepEqual(gate.breaker.state, { kind: 'closed', failures: 0 }, 'a crowded pool never opens it');
    for (let i = 0; i < 3; i += 1) gate.record(onTheWire, 'normal', 10 + i);
    assert.equal(gate.breaker.state.kind, 'open', 'an endpoint that holds its requests does');
  });

  it('a request that could not be built (invalid_request) neither counts nor resets, and gives its probe back', () => {
    const unsent = { outcome: 'permanent', error: 'invalid_request' } as const;
    assert.equal(breakerResult(unsent), 'unsent');
    assert.equal(breakerResult({ outcome: 'permanent', error: 'invalid_url' }), 'answered');
    const b = new CircuitBreaker(settings);
    b.record('failed', 'normal', 0);
    b.record('failed', 'normal', 1);
    for (let i = 0; i < 10; i += 1) assert.equal(b.record(breakerResult(unsent), 'normal', 2), undefined);
    assert.deepEqual(b.state, { kind: 'closed', failures: 2 }, 'no count and no reset');
    assert.equal(b.record('failed', 'normal', 3), 'opened');
    assert.equal(b.admit(1_003).kind, 'probe');
    assert.equal(b.record(breakerResult(unsent), 'probe', 1_004), undefined, 'an unsent probe does not close it');
    assert.equal(b.state.kind, 'half-open');
    assert.equal(b.admit(1_005).kind, 'probe', 'the next request probes');
  });
});

describe('endpoint gate', () => {
  const gateSettings = { ...settings, maxHoldMs: 60_000 };

  it('a Retry-After holds the endpoint until then, never earlier, then lets requests go', () => {
    const g = new EndpointGate(gateSettings);
    assert.equal(g.admit(0).kind, 'send');
    g.record({ outcome: 'retryable', status: 503, retryAfterMs: 7_000 }, 'normal', 100);
    assert.deepEqual(g.admit(101), { kind: 'defer', reason: 'retry_after', until: 7_100 });
    assert.deepEqual(g.admit(7_099), { kind: 'defer', reason: 'retry_after', until: 7_100 });
    assert.deepEqual(g.admit(7_100), { kind: 'send', probe: false });
  });

  it('a shorter Retry-After never shortens a hold in force; an absurd one is bounded', () => {
    const g = new EndpointGate(gateSettings);
    g.record({ outcome: 'retryable', status: 429, retryAfterMs: 5_000 }, 'normal', 0);
    g.record({ outcome: 'retryable', status: 429, retryAfterMs: 1_000 }, 'normal', 10);
    assert.equal(g.holdUntil, 5_000);
    g.record({ outcome: 'retryable', status: 429, retryAfterMs: 10 * 365 * 86_400_000 }, 'normal', 20);
    assert.equal(g.holdUntil, 60_020);
  });

  it('defers with the breaker open and gives the time of the next probe', () => {
    const g = new EndpointGate(gateSettings);
    for (let i = 0; i < 3; i += 1) g.record(timeout, 'normal', 10);
    assert.deepEqual(g.admit(20), { kind: 'defer', reason: 'circuit_open', until: 1_010 });
    assert.deepEqual(g.admit(1_010), { kind: 'send', probe: true });
  });

  it('rate limit: a second of burst, then deferred turns spread at the rate, tokens refill with time', () => {
    const g = new EndpointGate({ ...gateSettings, ratePerSecond: 10 });
    for (let i = 0; i < 10; i += 1) assert.equal(g.admit(0).kind, 'send', `burst ${i}`);
    const turns = [1, 2, 3].map(() => g.admit(0));
    assert.deepEqual(
      turns.map((t) => (t.kind === 'defer' ? [t.reason, t.until] : t.kind)),
      [
        ['rate_limited', 100],
        ['rate_limited', 200],
        ['rate_limited', 300],
      ],
    );
    assert.equal(g.admit(100).kind, 'send', 'one token back after 100 ms');
    assert.equal(g.admit(100).kind, 'defer');
  });

  it('an admitted request not sent gives its token and its probe back', () => {
    const g = new EndpointGate({ ...gateSettings, ratePerSecond: 1 });
    const first = g.admit(0);
    assert.equal(first.kind, 'send');
    assert.equal(g.admit(0).kind, 'defer');
    g.cancel({ probe: false });
    assert.equal(g.admit(0).kind, 'send');
  });
});

describe('deferral wait', () => {
  const base = { now: 1_000, steps: 0, scheduleMs: [10_000, 30_000, 60_000], jitter: 0.1, random: () => 0.5 };

  it('a Retry-After hold or rate-limit turn is exact; the earliest endpoint decides', () => {
    const wait = deferralWaitMs({
      ...base,
      deferred: [
        { endpoint: 'a', reason: 'retry_after', until: 8_000 },
        { endpoint: 'b', reason: 'rate_limited', until: 1_250 },
      ],
    });
    assert.equal(wait, 250);
  });

  it('an open breaker waits for its probe time, at least the backoff step the event reached', () => {
    const open = (until: number, steps: number) =>
      deferralWaitMs({ ...base, steps, deferred: [{ endpoint: 'a', reason: 'circuit_open', until }] });
    assert.equal(open(2_000, 0), 10_000, 'step 1 (10 s) is later than the probe');
    assert.equal(open(100_000, 0), 99_000, 'the probe is later than the step');
    assert.equal(open(2_000, 2), 60_000);
    assert.equal(open(2_000, 7), 60_000, 'the last step repeats');
  });

  it('jitter spreads the step within ±jitter', () => {
    const stalled = [{ endpoint: 'a', reason: 'destination_stalled' as const, until: 1_000 }];
    const at = (random: number) => deferralWaitMs({ ...base, random: () => random, deferred: stalled });
    assert.equal(at(0), 9_000);
    assert.equal(at(0.999999), 11_000);
  });
});

describe('a destination part: first 2xx, endpoints held back', () => {
  const r = (endpoint: string, extra: Partial<AttemptResult>): AttemptResult => ({
    endpoint,
    at: 0,
    latencyMs: 1,
    outcome: 'retryable',
    ...extra,
  });
  const held = (endpoint: string) => ({ endpoint, reason: 'circuit_open' as const, until: 5 });

  it('any 2xx delivers, whatever was held back', () => {
    assert.deepEqual(decidePart([r('a', ok)], [held('b')]), { kind: 'delivered' });
  });

  it('everything held back: deferred to those endpoints, no attempt', () => {
    const d = decidePart([], [held('a'), held('b')]);
    assert.deepEqual(d, { kind: 'defer', endpoints: ['a', 'b'], lastError: 'a: circuit_open; b: circuit_open' });
  });

  it('retryable failures plus held-back endpoints are retried together', () => {
    const d = decidePart([r('a', http500)], [held('b')]);
    assert.equal(d.kind, 'retry');
    assert.deepEqual(d.kind === 'retry' && d.endpoints, ['a', 'b']);
  });

  it('permanent failures with an endpoint held back: retried to that endpoint only, not dead-lettered', () => {
    const d = decidePart([r('a', { outcome: 'permanent', status: 404, error: 'http_404' })], [held('b')]);
    assert.equal(d.kind, 'retry');
    assert.deepEqual(d.kind === 'retry' && d.endpoints, ['b']);
    assert.deepEqual(decidePart([r('a', { outcome: 'permanent', status: 404 })], []).kind, 'dead');
  });
});

describe('destination cap (clock injected, judged explicitly)', () => {
  /** Another destination of the same process finishing a request at `at`. */
  /** Another destination of the same process finishing `n` requests at `at`. */
  const neighbourFinished = (progress: Progress, at: number, n = STALL_EVIDENCE) => {
    progress.finishedAt = Math.max(progress.finishedAt, at);
    progress.finished += n;
  };
  const fresh = (): Progress => ({ finishedAt: Number.NEGATIVE_INFINITY, finished: 0 });
  /** Takes the whole allowance of a destination not yet moving; the next event's `acquire`. */
  const fillAllowance = (cap: DestinationCap) => {
    for (let i = 0; i < UNPROVEN_IN_FLIGHT; i += 1) assert.equal(cap.acquire(), true);
    return cap.acquire();
  };

  it('a destination that answers nothing holds at most UNPROVEN_IN_FLIGHT requests; stalled once others move on', async () => {
    let now = 0;
    const progress = fresh();
    const cap = new DestinationCap(256, 40, { progress, now: () => now });
    const waiting = fillAllowance(cap);
    assert.ok(waiting instanceof Promise, 'not stalled yet: may wait');
    now = 100;
    neighbourFinished(progress, 100, STALL_EVIDENCE - 1);
    cap.judge(5);
    assert.equal(cap.stalled, false, 'a few answers elsewhere (a probe) are not enough evidence');
    neighbourFinished(progress, 100, 1);
    cap.judge(5);
    assert.equal(cap.stalled, true);
    assert.equal(await waiting, false, 'the waiter gave up once the destination stalled');
    assert.equal(cap.acquire(), false, 'stalled: deferred at once, no wait');
    cap.release(100);
    assert.equal(cap.stalled, false, 'a request finished: moving again');
    assert.equal(cap.acquire(), true, 'a slot again');
    cap.close();
  });

  it('stalled by the clock once others moved on, even when they stopped since (their slots held by its waiters)', async () => {
    let now = 0;
    const progress = fresh();
    const cap = new DestinationCap(256, 40, { progress, now: () => now });
    const waiting = fillAllowance(cap);
    neighbourFinished(progress, 10);
    now = 30;
    cap.judge(5);
    assert.equal(cap.stalled, false, 'not yet stallMs since it got busy');
    now = 50;
    cap.judge(5);
    assert.equal(cap.stalled, true, 'nothing of its own finished for stallMs, others did meanwhile');
    assert.equal(await waiting, false);
    cap.close();
  });

  it('a process slow as a whole stalls nobody: without progress elsewhere, a quiet destination keeps waiting', () => {
    let now = 0;
    const cap = new DestinationCap(256, 40, { progress: fresh(), now: () => now });
    for (let i = 0; i < UNPROVEN_IN_FLIGHT; i += 1) cap.acquire();
    now = 5_000;
    cap.judge(undefined);
    assert.equal(cap.stalled, false);
    assert.ok(cap.acquire() instanceof Promise);
    cap.close();
  });

  it('a request that timed out frees its slot but proves nothing: not moving, no progress for the process', () => {
    let now = 0;
    const progress = fresh();
    const cap = new DestinationCap(256, 1_000, { progress, now: () => now });
    for (let i = 0; i < UNPROVEN_IN_FLIGHT; i += 1) cap.acquire();
    now = 5_000;
    cap.release(5_000, 'timed-out');
    assert.equal(progress.finishedAt, Number.NEGATIVE_INFINITY);
    assert.equal(cap.acquire(), true, 'its own slot back');
    assert.ok(cap.acquire() instanceof Promise, 'still limited to UNPROVEN_IN_FLIGHT');
    cap.close();
  });

  it('a destination that keeps answering may use the whole cap, and a burst before its first answer waits', () => {
    let now = 0;
    const cap = new DestinationCap(40, 1_000, { progress: fresh(), now: () => now });
    for (let i = 0; i < UNPROVEN_IN_FLIGHT; i += 1) cap.acquire();
    const burst = Array.from({ length: 100 }, () => cap.acquire());
    assert.ok(
      burst.every((b) => b instanceof Promise),
      'no answer yet, not stalled: the whole burst waits',
    );
    now = 5;
    cap.release(5);
    assert.equal(cap.active, 40, 'moving: the whole cap in flight');
    assert.equal(cap.waiting, 75);
    for (let i = 0; i < 40; i += 1) cap.release(5);
    assert.equal(cap.active, 40);
    assert.equal(cap.waiting, 35, 'one waiter served per request finished');
    cap.close();
  });

  it('stalled only once its waiters are about to hold others back (a partition crowded), then until it answers', async () => {
    let now = 0;
    const progress = fresh();
    const cap = new DestinationCap(256, 40, { progress, now: () => now });
    const waiting = fillAllowance(cap);
    neighbourFinished(progress, 10);
    now = 1_000;
    cap.judge(5, 'calm');
    assert.equal(cap.stalled, false, 'no partition crowded: its waiters keep nobody waiting');
    assert.ok(cap.acquire() instanceof Promise, 'a further event still waits');
    cap.judge(5, 'crowded');
    assert.equal(cap.stalled, true, 'a partition crowded: stalled');
    assert.equal(await waiting, false);
    cap.judge(5, 'calm');
    assert.equal(cap.stalled, true, 'stays stalled when the slots are freed (by its own waiters leaving)');
    assert.equal(cap.acquire(), false);
    cap.release(1_000);
    cap.judge(5, 'crowded');
    assert.equal(cap.stalled, false, 'one request answered: moving again');
    cap.close();
  });

  it('an endpoint known to be slow gets PATIENCE_FACTOR × its answer time before it counts as stalled', async () => {
    let now = 0;
    const progress = fresh();
    const cap = new DestinationCap(256, 100, { progress, now: () => now });
    cap.acquire();
    now = 400;
    cap.release(400); // it answers, in 400 ms
    now = 5_000; // idle since: no longer moving, so a burst meets the unproven allowance
    const waiting = fillAllowance(cap);
    assert.ok(waiting instanceof Promise);
    neighbourFinished(progress, 5_010);
    now = 5_000 + PATIENCE_FACTOR * 400 - 1;
    cap.judge(5);
    assert.equal(cap.stalled, false, 'past stallMs, but within twice its usual answer time');
    now = 5_000 + PATIENCE_FACTOR * 400;
    cap.judge(5);
    assert.equal(cap.stalled, true, 'twice its usual answer time without one: stalled');
    assert.equal(await waiting, false);
    cap.close();
  });

  it('timeouts do not lengthen the patience: a black hole is judged on stallMs however long its requests hang', async () => {
    let now = 0;
    const progress = fresh();
    const cap = new DestinationCap(256, 100, { progress, now: () => now });
    for (let i = 0; i < UNPROVEN_IN_FLIGHT; i += 1) cap.acquire();
    now = 5_000;
    for (let i = 0; i < UNPROVEN_IN_FLIGHT; i += 1) cap.release(5_000, 'timed-out');
    const waiting = fillAllowance(cap);
    neighbourFinished(progress, 5_010);
    now = 5_100;
    cap.judge(5);
    assert.equal(cap.stalled, true);
    assert.equal(await waiting, false);
    cap.close();
  });

  it('a destination 4× slower than the fastest may queue only what it works off within the stall time', () => {
    let now = 0;
    const cap = new DestinationCap(UNPROVEN_IN_FLIGHT, 100, { progress: fresh(), now: () => now });
    for (let i = 0; i < UNPROVEN_IN_FLIGHT; i += 1) cap.acquire();
    now = 400;
    cap.release(400); // 400 ms per request, 16 at a time: 25 ms per slot
    cap.acquire();
    cap.judge(400);
    const own = [1, 2, 3, 4, 5].map(() => cap.acquire());
    assert.ok(
      own.every((a) => a instanceof Promise),
      'the fastest itself: its queue is its own business',
    );
    const slow = new DestinationCap(UNPROVEN_IN_FLIGHT, 100, { progress: fresh(), now: () => now });
    for (let i = 0; i < UNPROVEN_IN_FLIGHT; i += 1) slow.acquire();
    slow.release(400);
    slow.acquire();
    slow.judge(5);
    const allowed = [1, 2, 3, 4].map(() => slow.acquire());
    assert.ok(
      allowed.every((a) => a instanceof Promise),
      'four places: 4 × 25 ms within 100 ms',
    );
    assert.equal(slow.acquire(), false, 'the fifth would wait longer than the stall time');
    cap.close();
    slow.close();
  });
});
