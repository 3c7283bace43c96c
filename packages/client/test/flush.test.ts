import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { Analytics, ClientClosedError } from '../src/index.ts';
import type { AnalyticsOptions } from '../src/index.ts';
import { FakeIngest, pause } from './support/fake-ingest.ts';
import { ManualClock } from './support/manual-clock.ts';

let ingest: FakeIngest;
const clients: Analytics[] = [];

function client(options: AnalyticsOptions = {}): Analytics {
  const analytics = new Analytics('write-key', { endpoint: ingest.endpoint, ...options });
  clients.push(analytics);
  return analytics;
}

beforeEach(async () => {
  ingest = await FakeIngest.start();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await ingest.close();
});

describe('flush triggers', () => {
  it('sends nothing for 19 calls and one batch of 20 at the 20th (default flushAt)', async () => {
    const analytics = client({ clock: new ManualClock() });
    for (let i = 0; i < 19; i++) analytics.track({ userId: 'u', event: `e${i}` });
    await pause(100);
    assert.equal(ingest.requests.length, 0, 'a call only queues');
    analytics.track({ userId: 'u', event: 'e19' });
    await ingest.waitFor((s) => s.requests.length === 1);
    assert.equal(ingest.requests[0]!.body.batch.length, 20);
    assert.deepEqual(
      ingest.requests[0]!.body.batch.map((m) => m.event),
      Array.from({ length: 20 }, (_, i) => `e${i}`),
    );
    assert.equal(analytics.queued, 0);
  });

  it('size is the same setting as flushAt', async () => {
    const analytics = client({ size: 3, clock: new ManualClock() });
    for (let i = 0; i < 3; i++) analytics.identify({ userId: `u${i}` });
    await ingest.waitFor((s) => s.messages.length === 3);
    assert.equal(ingest.requests.length, 1);
  });

  it('flushes after flushAfter (default 5 s) on an injected clock, not before', async () => {
    const clock = new ManualClock();
    const analytics = client({ clock });
    analytics.track({ userId: 'u', event: 'a' });
    analytics.track({ userId: 'u', event: 'b' });
    clock.advance(4_999);
    await pause(100);
    assert.equal(ingest.requests.length, 0);
    clock.advance(1);
    await ingest.waitFor((s) => s.requests.length === 1);
    assert.deepEqual(
      ingest.requests[0]!.body.batch.map((m) => m.event),
      ['a', 'b'],
    );
    assert.equal(clock.pendingTimers, 0, 'no timer while the queue is empty');
  });

  it('flushes after a short real flushAfter', async () => {
    const analytics = client({ flushAfter: 50 });
    const started = Date.now();
    analytics.track({ userId: 'u', event: 'a' });
    await ingest.waitFor((s) => s.requests.length === 1);
    assert.ok(Date.now() - started >= 45);
  });

  it('flushAt = 1 sends every call right away, one request each', async () => {
    const analytics = client({ flushAt: 1, clock: new ManualClock() });
    analytics.track({ userId: 'u', event: 'first' });
    await ingest.waitFor((s) => s.requests.length === 1);
    analytics.track({ userId: 'u', event: 'second' });
    await ingest.waitFor((s) => s.requests.length === 2);
    assert.deepEqual(
      ingest.requests.map((r) => r.body.batch.length),
      [1, 1],
    );
  });

  it('flush() sends what is queued and resolves once it is delivered', async () => {
    const analytics = client({ clock: new ManualClock() });
    analytics.track({ userId: 'u', event: 'a' });
    analytics.page({ userId: 'u', name: 'Home' });
    await analytics.flush();
    assert.equal(ingest.messages.length, 2);
    await analytics.flush(); // nothing queued: resolves at once
    assert.equal(ingest.requests.length, 1);
  });
});

describe('close', () => {
  it('flushes everything queued, waits for in-flight sends, then refuses calls', async () => {
    ingest.responder = () => ({ status: 200 });
    const analytics = client({ clock: new ManualClock(), maxInFlight: 2 });
    const ids = new Set<string>();
    for (let i = 0; i < 95; i++) ids.add(analytics.track({ userId: `u${i}`, event: 'e' }));
    await analytics.close();
    assert.equal(ingest.messages.length, 95);
    assert.deepEqual(new Set(ingest.messages.map((m) => m.messageId)), ids);
    assert.throws(() => analytics.track({ userId: 'u', event: 'late' }), ClientClosedError);
    assert.throws(
      () => analytics.identify({ userId: 'u' }),
      (err: unknown) => (err as ClientClosedError).code === 'client_closed',
    );
    await analytics.close(); // idempotent
    await analytics.flush(); // harmless after close
  });

  it('refuses calls made while close is in progress', async () => {
    const analytics = client({ clock: new ManualClock() });
    analytics.track({ userId: 'u', event: 'e' });
    const closing = analytics.close();
    assert.throws(() => analytics.track({ userId: 'u', event: 'late' }), ClientClosedError);
    await closing;
    assert.equal(ingest.messages.length, 1);
  });

  it('waits for a batch that is being retried', async () => {
    ingest.responder = (n) => (n < 3 ? { status: 503 } : { status: 200 });
    const analytics = client({ retryMinDelay: 20, retryMaxDelay: 20 });
    analytics.track({ userId: 'u', event: 'e' });
    await analytics.close();
    assert.equal(ingest.requests.length, 3);
  });
});
