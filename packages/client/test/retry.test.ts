import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Analytics, BatchRejectedError, RetriesExhaustedError } from '../src/index.ts';
import type { AnalyticsOptions, DeliveryError } from '../src/index.ts';
import { fakeIngestPerTest } from './support/fake-ingest.ts';

const ingest = fakeIngestPerTest();

/** A client that flushes each call at once and backs off only briefly. */
function client(errors: DeliveryError[], options: AnalyticsOptions = {}): Analytics {
  return new Analytics('k', {
    endpoint: ingest.endpoint,
    flushAt: 1,
    retryMinDelay: 5,
    retryMaxDelay: 20,
    onError: (err) => errors.push(err),
    ...options,
  });
}

describe('retries', () => {
  it('retries 5xx, then succeeds; the same messages each time with a fresh sentAt', async () => {
    ingest.responder = (n) => ({ status: n === 1 ? 500 : n === 2 ? 503 : 200 });
    const errors: DeliveryError[] = [];
    const analytics = client(errors);
    const id = analytics.track({ userId: 'u', event: 'e' });
    await analytics.close();
    assert.equal(ingest.requests.length, 3);
    for (const req of ingest.requests)
      assert.deepEqual(
        req.body.batch.map((m) => m.messageId),
        [id],
      );
    const sentAts = ingest.requests.map((r) => Date.parse(r.body.sentAt));
    assert.ok(sentAts[2]! > sentAts[0]!, 'sentAt is set per attempt');
    assert.deepEqual(errors, []);
  });

  it('does not retry a 400: exactly one request, failure reported through onError and the error event', async () => {
    ingest.responder = () => ({ status: 400, body: '{"success":false,"code":"invalid_json"}' });
    const errors: DeliveryError[] = [];
    const analytics = client(errors);
    const events: DeliveryError[] = [];
    analytics.on('error', (err) => events.push(err));
    const id = analytics.track({ userId: 'u', event: 'e' });
    await analytics.close();
    assert.equal(ingest.requests.length, 1);
    assert.equal(errors.length, 1);
    assert.equal(events[0], errors[0]);
    const err = errors[0]!;
    assert.ok(err instanceof BatchRejectedError);
    assert.equal(err.code, 'batch_rejected');
    assert.equal(err.status, 400);
    assert.equal(err.attempts, 1);
    assert.match(err.message, /invalid_json/);
    assert.deepEqual(
      err.messages.map((m) => m.messageId),
      [id],
    );
  });

  for (const status of [401, 403, 404, 413]) {
    it(`does not retry ${status}`, async () => {
      ingest.responder = () => ({ status });
      const errors: DeliveryError[] = [];
      const analytics = client(errors);
      analytics.identify({ userId: 'u' });
      await analytics.close();
      assert.equal(ingest.requests.length, 1);
      assert.equal(errors[0]?.status, status);
    });
  }

  it('retries 429, honouring Retry-After', async () => {
    ingest.responder = (n) => (n === 1 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 });
    const errors: DeliveryError[] = [];
    const analytics = client(errors);
    analytics.track({ userId: 'u', event: 'e' });
    await analytics.close();
    assert.equal(ingest.requests.length, 2);
    const waited = ingest.requests[1]!.receivedAt - ingest.requests[0]!.receivedAt;
    assert.ok(waited >= 950, `waited ${waited} ms, Retry-After said 1 s`);
    assert.deepEqual(errors, []);
  });

  it('retries network errors (connection dropped mid-request)', async () => {
    ingest.responder = (n) => (n <= 2 ? { status: 0, destroy: true } : { status: 200 });
    const errors: DeliveryError[] = [];
    const analytics = client(errors);
    analytics.track({ userId: 'u', event: 'e' });
    await analytics.close();
    assert.equal(ingest.requests.length, 3);
    assert.deepEqual(errors, []);
  });

  it('retries an attempt that misses its deadline (timeout)', async () => {
    ingest.responder = (n) => (n === 1 ? { status: 200, delayMs: 1_000 } : { status: 200 });
    const errors: DeliveryError[] = [];
    const analytics = client(errors, { timeout: 100 });
    analytics.track({ userId: 'u', event: 'e' });
    await analytics.close();
    assert.equal(ingest.requests.length, 2);
    assert.deepEqual(errors, []);
  });

  it('reports RetriesExhaustedError after maxRetries retries', async () => {
    ingest.responder = () => ({ status: 502 });
    const errors: DeliveryError[] = [];
    const analytics = client(errors, { maxRetries: 3 });
    analytics.track({ userId: 'u', event: 'e' });
    await analytics.close();
    assert.equal(ingest.requests.length, 4);
    assert.ok(errors[0] instanceof RetriesExhaustedError);
    assert.equal(errors[0].code, 'retries_exhausted');
    assert.equal(errors[0].attempts, 4);
    assert.equal(errors[0].status, 502);
  });

  it('reports connection refused after retries', async () => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const { port } = probe.address() as AddressInfo;
    probe.close();
    await once(probe, 'close');
    const errors: DeliveryError[] = [];
    const analytics = client(errors, { endpoint: `http://127.0.0.1:${port}`, maxRetries: 2 });
    analytics.track({ userId: 'u', event: 'e' });
    await analytics.close();
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof RetriesExhaustedError);
    assert.equal(errors[0].attempts, 3);
    assert.equal(errors[0].status, undefined);
    assert.match(errors[0].message, /ECONNREFUSED/);
  });

  it('keeps delivering later batches after one fails', async () => {
    ingest.responder = (n) => ({ status: n === 1 ? 400 : 200 });
    const errors: DeliveryError[] = [];
    const analytics = client(errors);
    analytics.track({ userId: 'u', event: 'bad' });
    await analytics.flush();
    analytics.track({ userId: 'u', event: 'good' });
    await analytics.close();
    assert.equal(errors.length, 1);
    assert.deepEqual(
      ingest.messages.map((m) => m.event),
      ['bad', 'good'],
    );
  });
});

describe('failure reporting is robust', () => {
  it('a throwing onError, error listener or log sink does not stop delivery or flush', async () => {
    ingest.responder = (n) => ({ status: n === 1 ? 400 : 200 });
    const analytics = new Analytics('k', {
      endpoint: ingest.endpoint,
      flushAt: 1,
      debug: true,
      log: () => {
        throw new Error('sink down');
      },
      onError: () => {
        throw new Error('handler bug');
      },
    });
    analytics.on('error', () => {
      throw new Error('listener bug');
    });
    analytics.track({ userId: 'u', event: 'rejected' });
    await analytics.flush();
    analytics.track({ userId: 'u', event: 'delivered' });
    await analytics.close();
    assert.deepEqual(
      ingest.messages.map((m) => m.event),
      ['rejected', 'delivered'],
    );
  });
});
