import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analytics } from '../src/index.ts';
import { fakeIngestPerTest } from './support/fake-ingest.ts';

const ingest = fakeIngestPerTest('file');

describe('concurrency', () => {
  it('10,000 concurrent calls: the server receives every messageId exactly once', async () => {
    // Some batches fail once with 503 so retries run alongside fresh sends.
    ingest.responder = (n) => ({ status: n % 7 === 3 ? 503 : 200 });
    const analytics = new Analytics('k', {
      endpoint: ingest.endpoint,
      retryMinDelay: 1,
      retryMaxDelay: 5,
      flushAfter: 20,
    });
    const ids = await Promise.all(
      Array.from({ length: 10_000 }, async (_, i) => {
        if (i % 10 === 0) await new Promise((resolve) => setImmediate(resolve)); // interleave with sends
        return analytics.track({ userId: `user-${i % 250}`, event: 'Concurrent', properties: { i } });
      }),
    );
    await analytics.close();
    assert.equal(new Set(ids).size, 10_000, 'messageIds are unique');
    const delivered = new Map<string, number>();
    for (const [i, req] of ingest.requests.entries()) {
      if (ingest.responder(i + 1, req).status !== 200) continue;
      for (const m of req.body.batch) delivered.set(m.messageId, (delivered.get(m.messageId) ?? 0) + 1);
    }
    assert.equal(delivered.size, 10_000);
    for (const id of ids) assert.equal(delivered.get(id), 1, `messageId ${id}`);
  });
});
