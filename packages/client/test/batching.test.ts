import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analytics, MAX_BATCH_BYTES, MAX_BATCH_MESSAGES, MessageTooLargeError } from '../src/index.ts';
import { fakeIngestPerTest } from './support/fake-ingest.ts';
import { ManualClock } from './support/manual-clock.ts';

const ingest = fakeIngestPerTest();

/** Every batch ≤ 500,000 bytes, and each but the last could not have taken the next message. */
function assertTightBatches(): void {
  const requests = ingest.requests;
  for (const [i, req] of requests.entries()) {
    assert.ok(req.bytes <= MAX_BATCH_BYTES, `request ${i} is ${req.bytes} bytes`);
    assert.ok(req.body.batch.length <= MAX_BATCH_MESSAGES);
    if (i === requests.length - 1) continue;
    const next = requests[i + 1]!.body.batch[0]!;
    const nextBytes = Buffer.byteLength(JSON.stringify(next));
    const full = req.body.batch.length === MAX_BATCH_MESSAGES || req.bytes + 1 + nextBytes > MAX_BATCH_BYTES;
    assert.ok(
      full,
      `request ${i} (${req.bytes} B, ${req.body.batch.length} messages) could have taken the next ${nextBytes} B message`,
    );
  }
}

describe('batch splitting', () => {
  it('1,000 messages of ~2 KB: every batch ≤ 500,000 B and none needlessly small', async () => {
    // One batch in flight at a time, so requests arrive in queue order and each follows the previous.
    const analytics = new Analytics('k', { endpoint: ingest.endpoint, maxInFlight: 1, clock: new ManualClock() });
    const ids: string[] = [];
    for (let i = 0; i < 1_000; i++) {
      const pad = 'x'.repeat(1_800 + ((i * 37) % 400)); // 1.8–2.2 KB, uneven so limits fall mid-message
      ids.push(analytics.track({ userId: `user-${i}`, event: 'Bulk', properties: { pad } }));
    }
    await analytics.close();
    assert.deepEqual(
      ingest.messages.map((m) => m.messageId),
      ids,
    );
    assert.ok(ingest.requests.length >= 4, `${ingest.requests.length} requests`);
    assertTightBatches();
  });

  it('bursts are packed into full batches even with several in flight', async () => {
    const analytics = new Analytics('k', { endpoint: ingest.endpoint, clock: new ManualClock() });
    for (let i = 0; i < 1_000; i++)
      analytics.track({ userId: `u${i}`, event: 'Bulk', properties: { pad: 'y'.repeat(2_000) } });
    await analytics.close();
    assert.equal(ingest.messages.length, 1_000);
    const sizes = ingest.requests.map((r) => r.body.batch.length).sort((a, b) => b - a);
    // ~2 KB each → at most ~240 per request: 1,000 messages need 5 requests, not 50 of 20.
    assert.equal(ingest.requests.length, 5, `sizes ${sizes.join(',')}`);
  });

  it('caps a batch at 2,500 messages', async () => {
    const analytics = new Analytics('k', { endpoint: ingest.endpoint, maxInFlight: 1, clock: new ManualClock() });
    for (let i = 0; i < 6_000; i++) analytics.identify({ userId: `${i}` });
    await analytics.close();
    assert.deepEqual(
      ingest.requests.map((r) => r.body.batch.length),
      [2_500, 2_500, 1_000],
    );
    assertTightBatches();
  });

  it('refuses a call over 32 KB at the call, and sends nothing for it', async () => {
    const analytics = new Analytics('k', { endpoint: ingest.endpoint, flushAt: 1 });
    assert.throws(
      () => analytics.track({ userId: 'u', event: 'Huge', properties: { blob: 'z'.repeat(32_000) } }),
      MessageTooLargeError,
    );
    assert.equal(analytics.queued, 0);
    analytics.track({ userId: 'u', event: 'Small' });
    await analytics.close();
    assert.deepEqual(
      ingest.messages.map((m) => m.event),
      ['Small'],
    );
  });
});
