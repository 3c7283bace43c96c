import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createDeliverer, type DelivererService } from '@sluice/deliverer';
import type { CatalogReader, CatalogWriter, SourceOutcome, SourceWritten } from '@sluice/destination-catalog';
import type { SafeProducer } from '@sluice/kafka';
import {
  createTestTopics,
  metric,
  type Receiver,
  startReceiver,
  testConfig,
  testKafka,
  testServiceContext,
  uniqueName,
  waitUntil,
  startTestCatalog,
  type TestCatalog,
} from '@sluice/testkit';
import { ROUTES } from '../src/constants.ts';
import { ADMIN_TOKEN, postChunk, readIdentifies, serviceStarter } from './helpers.ts';

// Runtime sources and destinations for audience syncs, on the real broker
// (docs/reference/runtime-sources.md, "In audience-sync"): audience-sync reads the catalog as ingest
// does, so a snapshot names a runtime source as it names a file's, over HTTP or on the topic; the
// in-process deliverer delivers its identifies to a runtime destination of that source.

describe('audience syncs of runtime sources, delivered to a runtime destination', () => {
  const keyVariable = uniqueName('SLUICE_TEST_KEYRING').replaceAll(/[^A-Za-z0-9_]/g, '_');
  process.env[keyVariable] = randomBytes(32).toString('hex');
  const config = testConfig({
    sources: [{ id: 'web', writeKeys: ['wk'] }],
    ingest: { adminToken: ADMIN_TOKEN },
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
    runtimeDestinations: { keyring: [{ id: 'k1', key: { env: keyVariable } }] },
  });
  const kafka = testKafka({ clientId: 'audience-sync-runtime-sources-test' });
  const start = serviceStarter(config);
  const by = () => ({ by: 'operator', at: Date.now() });
  let reader: CatalogReader;
  let writer: CatalogWriter;
  let catalog: TestCatalog;
  let producer: SafeProducer;
  let hook: Receiver;
  let deliverer: DelivererService;
  let port: number;

  const written = (outcome: SourceOutcome): SourceWritten => {
    assert.ok('entry' in outcome, JSON.stringify(outcome));
    return outcome;
  };
  const audience = (sourceId: string, syncId: string, members: string[]) => ({
    sourceId,
    audience: 'VIP',
    syncId,
    members,
    final: true,
  });
  /** Until audience-sync has read the catalog as far as the writer's reader has. */
  const applied = () =>
    waitUntil(
      async () => (await metric(port, 'sluice_destination_catalog_applied_offset')) >= reader.appliedOffset,
      15_000,
      'audience-sync read the catalog change',
    );

  before(async () => {
    await createTestTopics(kafka, config);
    catalog = await startTestCatalog(kafka, config);
    ({ reader, writer, producer } = catalog);
    hook = await startReceiver();
    // In force before either service starts, as a file's source and destination are.
    written(await writer.createSource({ ...by(), source: { id: 'shop', name: 'Shop' } }));
    const destination = await writer.create({
      ...by(),
      definition: { id: 'crm', type: 'webhooks', sourceIds: ['shop'], settings: { webhooks: [{ url: hook.url }] } },
    });
    assert.equal(destination.kind, 'created', JSON.stringify(destination));
    deliverer = await createDeliverer(testServiceContext('deliverer', config), { port: 0 }).start();
    port = (await start()).port;
  });

  after(async () => {
    await deliverer?.close();
    await catalog?.close();
    await hook?.close();
    delete process.env[keyVariable];
  });

  it('a snapshot naming a runtime source in the catalog at start: 202, identifies of that source, delivered to its runtime destination', async () => {
    assert.equal(await metric(port, 'sluice_runtime_sources'), 1);
    const answer = await postChunk(port, ROUTES.audiences, audience('shop', 's1', ['u1', 'u2']));
    assert.equal(answer.status, 202, JSON.stringify(answer.body));
    const ids = await readIdentifies(config.kafka.topics.events, 2, 500);
    assert.deepEqual(ids.map((i) => [i.sourceId, i.key, i.traits.vip]).sort(), [
      ['shop', 'shop:u1', true],
      ['shop', 'shop:u2', true],
    ]);
    await waitUntil(() => hook.requests.length >= 2, 15_000, 'both identifies delivered to the runtime destination');
    const delivered = hook.requests.map((r) => JSON.parse(r.body.toString()) as { userId: string; type: string });
    assert.deepEqual(delivered.map((d) => [d.type, d.userId]).sort(), [
      ['identify', 'u1'],
      ['identify', 'u2'],
    ]);
  });

  it('a runtime source created while audience-sync runs: a chunk naming it is taken from the topic too; once deleted, refused unknown_source', async () => {
    const created = written(await writer.createSource({ ...by(), source: { id: 'later' } }));
    await applied();
    await producer.send(config.kafka.topics.audiences, [
      { key: 'later:VIP', value: JSON.stringify(audience('later', 'l1', ['u7'])) },
    ]);
    const ids = await readIdentifies(config.kafka.topics.events, 3, 500);
    assert.deepEqual(
      ids.filter((i) => i.sourceId === 'later').map((i) => [i.key, i.traits.vip]),
      [['later:u7', true]],
    );
    const deleted = await writer.deleteSource({ ...by(), id: 'later', expectedVersion: created.entry.version });
    assert.equal(deleted.kind, 'deleted');
    await applied();
    const refused = await postChunk(port, ROUTES.audiences, audience('later', 'l2', ['u8']));
    assert.deepEqual([refused.status, refused.body.code, refused.body.field], [400, 'unknown_source', 'sourceId']);
    assert.equal((await postChunk(port, ROUTES.audiences, audience('web', 'w1', ['u9']))).status, 202);
  });
});
