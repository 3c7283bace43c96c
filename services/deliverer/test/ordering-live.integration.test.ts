import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import type { Admin, Kafka } from '@sluice/kafka';
import { createRetry, type RetryService } from '@sluice/retry';
import {
  createTestTopics,
  metric,
  receivedEnvelope,
  startTestCatalog,
  type TestCatalog,
  testConfig,
  testKafka,
  testServiceContext,
  uniqueName,
  waitForCatalogApplied,
  waitUntil,
} from '@sluice/testkit';
import { waitingTopicName } from '@sluice/topology';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { delivererGroupId } from '../src/service/config.ts';
import { partitionOfKey, produceEvents } from './kafka-helpers.ts';
import { appliedOf, orderedReceiver } from './ordered-receiver.ts';

// Per-user order turned on and off while the deliverer runs (docs/reference/ordering.md), on the
// real broker: the in-process deliverer and retry service with a shrunk retry tier, a runtime
// destination changed through the catalog's writer, real receivers. A destination's waiting topic
// is created when it is ordered (at start, or by the change that orders it), never for one without
// order, and the waiting topics that exist are read at start whatever their destination is now.

const shrunk = { window: '60s', schedule: ['1s'], jitter: 0, tiers: ['1s'] };

describe('per-user order turned on and off while the deliverer runs', () => {
  const keyVariable = uniqueName('SLUICE_TEST_KEYRING').replaceAll(/[^A-Za-z0-9_]/g, '_');
  let config: SluiceConfig;
  let kafka: Kafka;
  let admin: Admin;
  let catalog: TestCatalog;
  let retry: RetryService;
  let deliverer: DelivererService;
  let crm: Awaited<ReturnType<typeof orderedReceiver>>;
  let steady: Awaited<ReturnType<typeof orderedReceiver>>;
  let duo: Awaited<ReturnType<typeof orderedReceiver>>;
  /** While set, user r's head keeps failing. */
  let holdR = true;
  const by = () => ({ by: 'operator', at: Date.now() });
  const startDeliverer = async () =>
    watchFatal(
      await createDeliverer(testServiceContext('deliverer', config), { port: 0, drainTimeoutMs: 5_000 }).start(),
    );
  const send = (sourceId: string, userId: string, ...messageIds: string[]) =>
    produceEvents(
      kafka,
      config.kafka.topics.events,
      messageIds.map((messageId) => receivedEnvelope({ sourceId, messageId, userId, event: 'e' })),
    );
  const exists = async (destinationId: string) =>
    (await admin.listTopics()).includes(waitingTopicName(config, destinationId));
  const seenByDeliverer = () => waitForCatalogApplied(catalog.reader, { base: deliverer.port });
  /** Fatal errors of the deliverers started here (a running process would have exited on one). */
  const fatals: string[] = [];
  const watchFatal = (service: DelivererService) => {
    void service.fatal?.then((err) => fatals.push(err.message));
    return service;
  };
  /** On a timeout, what the events group and the deliverers looked like: who held which partitions. */
  const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs: number, what: string | (() => string)) => {
    try {
      await waitUntil(check, timeoutMs, what);
    } catch (err) {
      const { groups } = await admin.describeGroups([delivererGroupId(config)]);
      const members = groups[0]?.members.map((m) => `${m.clientId}/${m.memberId.slice(-8)}`) ?? [];
      throw new Error(
        `${(err as Error).message}; events group ${groups[0]?.state}: [${members.join(', ')}]; fatal: [${fatals.join('; ')}]`,
      );
    }
  };
  const waitingTotal = () => metric(deliverer.port, 'sluice_deliverer_ordering_waiting_total');

  before(async () => {
    process.env[keyVariable] = randomBytes(32).toString('hex');
    crm = await orderedReceiver((id, n) => (id === 'a-0' && n === 1) || (id === 'r-0' && holdR));
    steady = await orderedReceiver(() => false);
    duo = await orderedReceiver((id, n) => id.endsWith('-0') && n === 1);
    config = testConfig({
      sources: [
        { id: 's', writeKeys: ['k'] },
        { id: 's2', writeKeys: ['k2'] },
        { id: 's3', writeKeys: ['k3'] },
      ],
      // Ordered from the start.
      destinations: [
        {
          id: 'steady',
          type: 'webhooks',
          sourceIds: ['s2'],
          ordering: 'per-user',
          settings: { webhooks: [{ url: steady.receiver.url }] },
        },
      ],
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
      retry: shrunk,
      runtimeDestinations: { keyring: [{ id: 'k1', key: { env: keyVariable } }] },
    });
    kafka = testKafka({ clientId: 'deliverer-ordering-live-test' });
    await createTestTopics(kafka, config);
    admin = kafka.admin();
    await admin.connect();
    catalog = await startTestCatalog(kafka, config);
    retry = await createRetry(testServiceContext('retry', config), { port: 0 }).start();
    deliverer = await startDeliverer();
  });

  after(async () => {
    await deliverer?.close();
    await retry?.close();
    await Promise.all([
      catalog?.close(),
      admin?.disconnect(),
      crm?.receiver.close(),
      steady?.receiver.close(),
      duo?.receiver.close(),
    ]);
    delete process.env[keyVariable];
  });

  it('a destination ordered at start has its waiting topic from the start', async () => {
    assert.equal(await exists('steady'), true, 'created before the events group joined');
    await send('s2', 'q', 'q-0', 'q-1', 'q-2');
    // The first deliveries wait for the consumer group's first assignment too: slow on a busy machine.
    await waitUntil(() => appliedOf(steady.applied, 'q-').length === 3, 60_000, "user q's three events");
    assert.deepEqual(appliedOf(steady.applied, 'q-'), ['q-0', 'q-1', 'q-2']);
  });

  it('a runtime destination changed to per-user order is ordered from then on, without a restart: its waiting topic is created by that change, before any wait, and read', async () => {
    const created = await catalog.writer.create({
      ...by(),
      definition: {
        id: 'crm',
        type: 'webhooks',
        sourceIds: ['s'],
        settings: { webhooks: [{ url: crm.receiver.url }] },
      },
    });
    assert.equal(created.kind, 'created', JSON.stringify(created));
    await seenByDeliverer();
    await send('s', 'p', 'p-0');
    await waitFor(() => appliedOf(crm.applied, 'p-').length === 1, 30_000, 'delivered while not ordered');
    assert.equal(await exists('crm'), false, 'no waiting topic for a destination without order');

    const patched = await catalog.writer.patch({
      ...by(),
      id: 'crm',
      expectedVersion: 1,
      patch: { ordering: 'per-user' },
    });
    assert.equal(patched.kind, 'updated', JSON.stringify(patched));
    await seenByDeliverer();
    await waitFor(() => exists('crm'), 30_000, 'the waiting topic created by the change');

    await send('s', 'a', 'a-0');
    await waitFor(() => crm.firstTry.has('a-0'), 30_000, "a's head tried (503)");
    // Read once the head failed: each waits behind it.
    await send('s', 'a', 'a-1', 'a-2', 'a-3');
    await waitFor(
      () => appliedOf(crm.applied, 'a-').length === 4,
      60_000,
      () => `user a's four events (applied: ${appliedOf(crm.applied, 'a-').join(', ')})`,
    );
    assert.deepEqual(
      appliedOf(crm.applied, 'a-'),
      ['a-0', 'a-1', 'a-2', 'a-3'],
      'in acceptance order, the retried head first',
    );
    const headAppliedAt = crm.applied.find((x) => x.id === 'a-0')!.at;
    for (const id of ['a-1', 'a-2', 'a-3'])
      assert.ok(crm.firstTry.get(id)! >= headAppliedAt, `${id} was not attempted before the head was delivered`);
    assert.equal(await waitingTotal(), 3, 'the three waited on the waiting topic');
    assert.deepEqual(fatals, [], 'no fatal error');
  });

  it('a restart with records left on the waiting topic of a destination no longer ordered delivers them', async () => {
    const before = await waitingTotal();
    await send('s', 'r', 'r-0');
    await waitFor(() => crm.firstTry.has('r-0'), 30_000, "r's head tried (503)");
    await send('s', 'r', 'r-1', 'r-2');
    await waitFor(async () => (await waitingTotal()) === before + 2, 30_000, "r's two events waiting");
    await deliverer.close();

    // Read at the deliverer's start: it starts with crm unordered, and reads the waiting topic that exists.
    const patched = await catalog.writer.patch({ ...by(), id: 'crm', expectedVersion: 2, patch: { ordering: null } });
    assert.equal(patched.kind, 'updated', JSON.stringify(patched));
    deliverer = await startDeliverer();
    await waitFor(
      () => appliedOf(crm.applied, 'r-').includes('r-2') && appliedOf(crm.applied, 'r-').includes('r-1'),
      60_000,
      "r's waiting events delivered",
    );
    assert.ok(!appliedOf(crm.applied, 'r-').includes('r-0'), 'its head still failing meanwhile');
    holdR = false;
    await waitFor(() => appliedOf(crm.applied, 'r-').includes('r-0'), 30_000, "r's head delivered by its retry");
  });

  it('two deliverers: a waiting topic created while both run is read by both, each for the users of its partitions', async () => {
    const second = await startDeliverer();
    try {
      const created = await catalog.writer.create({
        ...by(),
        definition: {
          id: 'duo',
          type: 'webhooks',
          sourceIds: ['s3'],
          ordering: 'per-user',
          settings: { webhooks: [{ url: duo.receiver.url }] },
        },
      });
      assert.equal(created.kind, 'created', JSON.stringify(created));
      await Promise.all([deliverer.port, second.port].map((base) => waitForCatalogApplied(catalog.reader, { base })));
      // One user in each partition: each deliverer owns one of them.
      const users = ['x', 'y'];
      for (let i = 0; partitionOfKey(`s3:${users[0]}`, 2) === partitionOfKey(`s3:${users[1]}`, 2); i++)
        users[1] = `y${i}`;
      const [x, y] = users as [string, string];
      await send('s3', x, 'x-0');
      await send('s3', y, 'y-0');
      await waitFor(() => duo.firstTry.has('x-0') && duo.firstTry.has('y-0'), 60_000, 'both heads tried (503)');
      await send('s3', x, 'x-1', 'x-2', 'x-3');
      await send('s3', y, 'y-1', 'y-2', 'y-3');
      await waitFor(
        () => appliedOf(duo.applied, 'x-').length === 4 && appliedOf(duo.applied, 'y-').length === 4,
        90_000,
        "both users' events",
      );
      assert.deepEqual(appliedOf(duo.applied, 'x-'), ['x-0', 'x-1', 'x-2', 'x-3']);
      assert.deepEqual(appliedOf(duo.applied, 'y-'), ['y-0', 'y-1', 'y-2', 'y-3']);
      assert.equal(await exists('duo'), true);
      assert.deepEqual(fatals, [], 'no fatal error');
    } finally {
      await second.close();
    }
  });
});
