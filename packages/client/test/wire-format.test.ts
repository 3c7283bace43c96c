import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analytics, LIBRARY_NAME, LIBRARY_VERSION } from '../src/index.ts';
import { fakeIngestPerTest } from './support/fake-ingest.ts';
import { ManualClock } from './support/manual-clock.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MS_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const library = { name: LIBRARY_NAME, version: LIBRARY_VERSION };

const ingest = fakeIngestPerTest();

describe('wire format', () => {
  it('POSTs JSON to {endpoint}/v1/batch with Basic auth (write key, empty password)', async () => {
    const analytics = new Analytics('my-write-key', { endpoint: ingest.endpoint });
    analytics.identify({ userId: 'u' });
    await analytics.close();
    const req = ingest.requests[0]!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/v1/batch');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.equal(req.headers.authorization, `Basic ${Buffer.from('my-write-key:').toString('base64')}`);
    assert.equal(req.bytes, Number(req.headers['content-length']));
    assert.equal(req.headers['user-agent'], `${LIBRARY_NAME}/${LIBRARY_VERSION}`);
  });

  it('keeps a path prefix of the endpoint and drops a trailing slash', async () => {
    const analytics = new Analytics('k', { endpoint: `${ingest.endpoint}/sluice/` });
    analytics.identify({ userId: 'u' });
    await analytics.close();
    assert.equal(ingest.requests[0]!.url, '/sluice/v1/batch');
  });

  it('sends all six call types in the shared shape', async () => {
    const clock = new ManualClock(Date.parse('2026-11-21T23:34:15.123Z'));
    const analytics = new Analytics('k', { endpoint: ingest.endpoint, clock });
    const integrations = { All: false, Webhooks: true };
    analytics.identify({ userId: 'u1', traits: { email: 'a@example.com' }, integrations });
    analytics.track({
      anonymousId: 'a1',
      event: 'Clicked',
      properties: { n: 1 },
      timestamp: '2026-01-01T00:00:00+01:00',
    });
    analytics.page({
      userId: 'u1',
      name: 'Pricing',
      category: 'Docs',
      properties: { url: 'https://x.test/pricing', path: '/pricing' },
    });
    analytics.screen({ userId: 'u1', name: 'Home', context: { device: { model: 'x', type: 'ios' } } });
    analytics.group({ userId: 'u1', groupId: 'g1', traits: { plan: 'pro' } });
    analytics.alias({ userId: 'u1', previousId: 'a1' });
    clock.advance(250);
    await analytics.close();

    assert.equal(ingest.requests.length, 1);
    const body = ingest.requests[0]!.body;
    assert.deepEqual(Object.keys(body), ['batch', 'sentAt', 'context']);
    assert.equal(body.sentAt, '2026-11-21T23:34:15.373Z', 'sentAt is the send time');
    assert.deepEqual(body.context, { library });
    const ids = new Set<string>();
    for (const m of body.batch) {
      assert.match(m.messageId, UUID_V4);
      assert.match(m.timestamp as string, ISO_MS_Z);
      assert.deepEqual((m.context as { library: unknown }).library, library);
      ids.add(m.messageId);
    }
    assert.equal(ids.size, 6);
    const strip = ({ messageId: _m, ...rest }: Record<string, unknown>) => rest;
    const at = '2026-11-21T23:34:15.123Z';
    assert.deepEqual(body.batch.map(strip), [
      {
        type: 'identify',
        timestamp: at,
        userId: 'u1',
        context: { library },
        integrations,
        traits: { email: 'a@example.com' },
      },
      {
        type: 'track',
        timestamp: '2025-12-31T23:00:00.000Z',
        anonymousId: 'a1',
        context: { library },
        event: 'Clicked',
        properties: { n: 1 },
      },
      {
        type: 'page',
        timestamp: at,
        userId: 'u1',
        context: { library },
        properties: { url: 'https://x.test/pricing', path: '/pricing' },
        name: 'Pricing',
        category: 'Docs',
      },
      {
        type: 'screen',
        timestamp: at,
        userId: 'u1',
        context: { device: { model: 'x', type: 'ios' }, library },
        name: 'Home',
      },
      { type: 'group', timestamp: at, userId: 'u1', context: { library }, groupId: 'g1', traits: { plan: 'pro' } },
      { type: 'alias', timestamp: at, userId: 'u1', context: { library }, previousId: 'a1' },
    ]);
  });
});
