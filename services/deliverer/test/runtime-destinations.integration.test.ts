import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import type { CatalogOutcome, CatalogReader, CatalogWriter } from '@sluice/destination-catalog';
import type { Kafka } from '@sluice/kafka';
import {
  metric,
  type Receiver,
  receivedEnvelope,
  startReceiver,
  type TopicWatcher,
  testConfig,
  testKafka,
  testServiceContext,
  uniqueName,
  waitForCatalogApplied,
  watchTopics,
  startTestCatalog,
  type TestCatalog,
} from '@sluice/testkit';
import { SIGNATURE_HEADER, verifySignature } from '@sluice/webhook-signature';
import type { ServiceContext } from '@sluice/service-kit';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { produceEvents } from './kafka-helpers.ts';

// Runtime destinations in the running deliverer, on the real broker: a destination created,
// replaced and deleted through the catalog's writer while the deliverer runs, real receivers.

describe('runtime destinations in the running deliverer', () => {
  const keyVariable = uniqueName('SLUICE_TEST_KEYRING').replaceAll(/[^A-Za-z0-9_]/g, '_');
  let receivers: Record<'first' | 'second' | 'moved' | 'marker' | 'later', Receiver>;
  let config: SluiceConfig;
  let ctx: ServiceContext;
  let service: DelivererService;
  let kafka: Kafka;
  let reader: CatalogReader;
  let writer: CatalogWriter;
  let catalog: TestCatalog;
  let deadLetters: TopicWatcher;
  const by = () => ({ by: 'operator', at: Date.now() });
  const ids = (r: Receiver) => r.requests.map((q) => String(q.headers['x-message-id']));
  const send = (...messageIds: string[]) =>
    produceEvents(
      kafka,
      config.kafka.topics.events,
      // One user: one partition, handled in order (one record in flight), so an event's handling
      // is over once the receivers have the one produced after it.
      messageIds.map((messageId) => receivedEnvelope({ sourceId: 's', messageId, userId: 'one-user' })),
    );
  // In force once the deliverer has read past what the writer's reader has read.
  const seenByDeliverer = () => waitForCatalogApplied(reader, { base: service.port });
  const definition = (urls: string[]) => ({
    id: 'crm',
    type: 'webhooks',
    sourceIds: ['s'],
    settings: { webhooks: urls.map((url) => ({ url })) },
  });

  before(async () => {
    process.env[keyVariable] = randomBytes(32).toString('hex');
    const [first, second, moved, marker, later] = await Promise.all([1, 2, 3, 4, 5].map(() => startReceiver()));
    receivers = { first: first!, second: second!, moved: moved!, marker: marker!, later: later! };
    config = testConfig({
      sources: [{ id: 's', writeKeys: ['k'] }],
      // A file destination on the same source: what shows that a later event was handled.
      destinations: [{ id: 'marker', type: 'webhooks', sourceIds: ['s'], settings: { webhookUrl: marker!.url } }],
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] }, maxInFlightPerPartition: 1 },
      runtimeDestinations: { keyring: [{ id: 'k1', key: { env: keyVariable } }] },
    });
    kafka = testKafka({ clientId: 'deliverer-runtime-destinations-test' });
    ctx = testServiceContext('deliverer', config);
    service = await createDeliverer(ctx, { port: 0 }).start();
    catalog = await startTestCatalog(kafka, config);
    ({ reader, writer } = catalog);
    deadLetters = await watchTopics(kafka, [config.kafka.topics.deadLetter]);
  });

  after(async () => {
    await service?.close();
    await deadLetters?.stop();
    await catalog?.close();
    await Promise.all(Object.values(receivers ?? {}).map((r) => r.close()));
    delete process.env[keyVariable];
  });

  it('created: delivered to both endpoints, signed with the generated secret; replaced: the new URL only; deleted: not routed', async () => {
    const { first, second, moved, marker } = receivers;
    const created: CatalogOutcome = await writer.create({ ...by(), definition: definition([first.url, second.url]) });
    assert.equal(created.kind, 'created', JSON.stringify(created));
    assert.ok(created.kind === 'created');
    const [generated] = created.secrets;
    assert.equal(generated?.scheme, 'x-signature');
    await seenByDeliverer();
    assert.equal(await metric(service.port, 'sluice_runtime_destinations'), 1);

    await send('m-1');
    // The first deliveries wait for the consumer group's first assignment too: slow on a busy machine.
    await Promise.all([first.waitFor(1, 60_000), second.waitFor(1, 60_000), marker.waitFor(1, 60_000)]);
    for (const receiver of [first, second]) {
      const [request] = receiver.requests;
      assert.equal(String(request!.headers['x-message-id']), 'm-1');
      const signature = String(request!.headers[SIGNATURE_HEADER.toLowerCase()]);
      assert.ok(verifySignature(generated!.secret, request!.body, signature), 'signed with the generated secret');
    }

    const replaced = await writer.replace({
      ...by(),
      id: 'crm',
      expectedVersion: 1,
      definition: definition([moved.url]),
    });
    assert.equal(replaced.kind, 'updated', JSON.stringify(replaced));
    await seenByDeliverer();
    await send('m-2');
    await Promise.all([moved.waitFor(1), marker.waitFor(2)]);
    assert.deepEqual(ids(moved), ['m-2']);
    const [request] = moved.requests;
    // A replace that gives no signing secret keeps the current one.
    assert.ok(verifySignature(generated!.secret, request!.body, String(request!.headers['x-signature'])));
    assert.deepEqual([ids(first), ids(second)], [['m-1'], ['m-1']], 'the old URLs get nothing more');

    const deleted = await writer.delete({ ...by(), id: 'crm', expectedVersion: 2 });
    assert.equal(deleted.kind, 'deleted', JSON.stringify(deleted));
    await seenByDeliverer();
    assert.equal(await metric(service.port, 'sluice_runtime_destinations'), 0);
    await send('m-3', 'm-4');
    await marker.waitFor(4);
    assert.deepEqual(ids(marker), ['m-1', 'm-2', 'm-3', 'm-4']);
    // m-3 was handled before m-4 (one partition, one record in flight): routed to nothing but the
    // marker, it was neither attempted at the deleted destination nor dead-lettered.
    assert.deepEqual([ids(first), ids(second), ids(moved)], [['m-1'], ['m-1'], ['m-2']]);
    assert.equal(deadLetters.records(config.kafka.topics.deadLetter).length, 0);
  });

  it('a file reload keeps the runtime destinations in force; a deliverer started later has them before any event', async () => {
    const { later, marker } = receivers;
    const created = await writer.create({ ...by(), definition: { ...definition([later.url]), id: 'erp' } });
    assert.equal(created.kind, 'created', JSON.stringify(created));
    await seenByDeliverer();
    // A reload of the file: merged with the catalog in force.
    ctx.config.set({ ...ctx.config.file, delivery: { ...ctx.config.file.delivery, timeoutMs: 4_000 } });
    assert.equal(ctx.config.current.delivery.timeoutMs, 4_000);
    assert.deepEqual(
      ctx.config.current.destinations.map((d) => d.id),
      ['marker', 'erp'],
    );
    assert.deepEqual(
      ctx.config.file.destinations.map((d) => d.id),
      ['marker'],
    );

    await service.close();
    ctx = testServiceContext('deliverer', config);
    service = await createDeliverer(ctx, { port: 0 }).start();
    assert.equal(await metric(service.port, 'sluice_runtime_destinations'), 1, 'read whole at start');
    assert.ok((await metric(service.port, 'sluice_destination_catalog_applied_offset')) >= reader.appliedOffset);
    await send('m-5');
    await Promise.all([later.waitFor(1, 60_000), marker.waitFor(5, 60_000)]);
    assert.deepEqual(ids(later), ['m-5']);
  });
});
