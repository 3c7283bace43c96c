import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Analytics } from '@segment/analytics-node';
import { jsonValues, readTopic } from '@sluice/testkit';
import { ingestConfig, startIngest, WRITE_KEY, type RunningIngest } from './helpers.ts';

let ingest: RunningIngest;
before(async () => {
  ingest = await startIngest(ingestConfig());
});
after(() => ingest.service.close());

test('the real @segment/analytics-node client delivers onto sluice.events', async () => {
  const analytics = new Analytics({ writeKey: WRITE_KEY, host: ingest.url, maxEventsInBatch: 10, flushInterval: 50 });
  const errors: unknown[] = [];
  analytics.on('error', (err) => errors.push(err));
  const historical = new Date('2025-06-01T12:00:00.000Z');
  analytics.identify({ userId: 'seg-u1', traits: { plan: 'pro' } });
  analytics.track({ userId: 'seg-u1', event: 'Order Completed', properties: { total: 12.5 }, timestamp: historical });
  analytics.page({ anonymousId: 'seg-a1', name: 'Pricing', properties: { path: '/pricing' } });
  analytics.screen({ userId: 'seg-u1', name: 'Home' });
  analytics.group({ userId: 'seg-u1', groupId: 'acme', traits: { seats: 5 } });
  analytics.alias({ userId: 'seg-u1', previousId: 'seg-a1' });
  await analytics.closeAndFlush({ timeout: 10_000 });
  assert.deepEqual(errors, []);

  const records = await readTopic(ingest.kafka, ingest.config.kafka.topics.events, {
    count: 6,
    timeoutMs: 10_000,
    settleMs: 300,
  });
  const events = jsonValues(records);
  assert.equal(events.length, 6);
  const byType = Object.fromEntries(events.map((e) => [e.type as string, e]));
  assert.deepEqual(Object.keys(byType).sort(), ['alias', 'group', 'identify', 'page', 'screen', 'track']);
  for (const e of events) {
    assert.equal(e.sourceId, 'src-a');
    assert.match(String(e.messageId), /.+/);
    assert.match(String(e.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal((e.context as { library: { name: string } }).library.name, '@segment/analytics-node');
    assert.equal((e.context as { ip: string }).ip, '127.0.0.1');
  }
  assert.deepEqual(byType.identify!.traits, { plan: 'pro' });
  assert.equal(byType.track!.event, 'Order Completed');
  assert.deepEqual(byType.track!.properties, { total: 12.5 });
  // analytics-node sends sentAt with each batch: the timestamp is skew-corrected, by at most the transit time.
  assert.equal(byType.track!.originalTimestamp, historical.toISOString());
  assert.ok(typeof byType.track!.sentAt === 'string');
  const drift = Date.parse(String(byType.track!.timestamp)) - historical.getTime();
  assert.ok(drift >= 0 && drift < 2_000, `timestamp drift ${drift} ms`);
  assert.equal(byType.page!.anonymousId, 'seg-a1');
  assert.equal(byType.page!.name, 'Pricing');
  assert.equal(byType.group!.groupId, 'acme');
  assert.equal(byType.alias!.previousId, 'seg-a1');
  const keys = records.map((r) => r.key);
  assert.ok(keys.includes('src-a:seg-u1') && keys.includes('src-a:seg-a1'));
});
