import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { SluiceConfig } from '@sluice/config';
import { replayDeadLetters } from '@sluice/dead-letters';
import type { CatalogReader, CatalogWriter } from '@sluice/destination-catalog';
import { type DestinationStateName, stateKey, writeDestinationState } from '@sluice/destination-state';
import { RETRY_HEADERS, retryStateFromHeaders } from '@sluice/envelope';
import type { Kafka, SafeProducer } from '@sluice/kafka';
import { createRetry, type RetryService } from '@sluice/retry';
import {
  createTestTopics,
  metric,
  readTopic,
  type Receiver,
  receivedEnvelope,
  scrapeMetrics,
  startReceiver,
  type TopicWatcher,
  testConfig,
  testKafka,
  testServiceContext,
  uniqueName,
  waitForStateApplied,
  waitUntil,
  watchTopics,
  startTestCatalog,
  type TestCatalog,
} from '@sluice/testkit';
import { parkedTopicName } from '@sluice/topology';
import { createDeliverer, type DelivererService } from '../src/index.ts';
import { produceEvents } from './kafka-helpers.ts';

// A runtime destination deleted while its events are on their way back (docs/reference/runtime-destinations.md,
// "Deleted"), on the real broker: the in-process deliverer and retry service, a real receiver. One
// event is in the retry tiers and one is parked (the destination paused) when the destination is
// deleted: each is dead-lettered `destination_deleted`, none attempted; created again with the id,
// `replayDeadLetters` (what `sluice dlq replay` runs) delivers both.

/** Long enough that the retried event is still in the tiers when the deletion is read. */
const RETRY_AFTER = '15s';

describe('a runtime destination deleted while its events are on their way back', () => {
  const keyVariable = uniqueName('SLUICE_TEST_KEYRING').replaceAll(/[^A-Za-z0-9_]/g, '_');
  let hook: Receiver;
  let failing = true;
  let config: SluiceConfig;
  let kafka: Kafka;
  let producer: SafeProducer;
  let reader: CatalogReader;
  let writer: CatalogWriter;
  let catalog: TestCatalog;
  let deliverer: DelivererService;
  let retry: RetryService;
  let seen: TopicWatcher;
  const by = () => ({ by: 'operator', at: Date.now() });
  const definition = () => ({
    id: 'billing',
    type: 'webhooks',
    sourceIds: ['s'],
    settings: { webhooks: [{ url: hook.url }] },
  });
  const triesOf = (messageId: string) => hook.requests.filter((q) => q.headers['x-message-id'] === messageId).length;
  const withId = (topic: string, messageId: string) =>
    seen.records(topic).filter((r) => r.headers[RETRY_HEADERS.messageId] === messageId);
  // In force once the deliverer has read past what the writer's reader has read.
  const seenByDeliverer = () =>
    waitUntil(
      async () => (await metric(deliverer.port, 'sluice_destination_catalog_applied_offset')) >= reader.appliedOffset,
      15_000,
      'the deliverer read the catalog change',
    );
  const setState = async (state: DestinationStateName) => {
    await writeDestinationState(producer, config.kafka.topics.destinationState, stateKey('billing'), {
      state,
      reason: 't',
      by: 't',
      at: new Date().toISOString(),
    });
    await waitForStateApplied(kafka, { topic: config.kafka.topics.destinationState, base: deliverer.port });
  };
  /** `sluice_deliverer_dead_lettered_total` of one destination and reason. */
  const deadLettered = async (destination: string, reason: string) => {
    const lines = (await scrapeMetrics(deliverer.port)).split('\n');
    const line = lines.find(
      (l) =>
        l.startsWith('sluice_deliverer_dead_lettered_total{') &&
        l.includes(`destination="${destination}"`) &&
        l.includes(`reason="${reason}"`),
    );
    return line === undefined ? 0 : Number(line.split(' ').at(-1));
  };
  const send = (messageId: string) =>
    produceEvents(kafka, config.kafka.topics.events, [
      receivedEnvelope({ sourceId: 's', messageId, userId: messageId }),
    ]);

  before(async () => {
    process.env[keyVariable] = randomBytes(32).toString('hex');
    hook = await startReceiver({ behaviour: () => ({ status: failing ? 500 : 200 }) });
    config = testConfig({
      sources: [{ id: 's', writeKeys: ['k'] }],
      destinations: [],
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
      retry: { window: '10m', schedule: [RETRY_AFTER], jitter: 0, tiers: ['1s'] },
      runtimeDestinations: { keyring: [{ id: 'k1', key: { env: keyVariable } }] },
    });
    kafka = testKafka({ clientId: 'deliverer-destination-deleted-test' });
    await createTestTopics(kafka, config);
    catalog = await startTestCatalog(kafka, config);
    ({ reader, writer, producer } = catalog);
    // In force before the deliverer starts, never paused: no parked topic until its first park.
    const created = await writer.create({ ...by(), definition: definition() });
    assert.equal(created.kind, 'created', JSON.stringify(created));
    retry = await createRetry(testServiceContext('retry', config), { port: 0 }).start();
    deliverer = await createDeliverer(testServiceContext('deliverer', config), {
      port: 0,
      parkCheckIntervalMs: 50,
    }).start();
    seen = await watchTopics(kafka, [config.kafka.topics.retry, config.kafka.topics.deadLetter]);
  });

  after(async () => {
    await deliverer?.close();
    await retry?.close();
    await seen?.stop();
    await catalog?.close();
    await hook?.close();
    delete process.env[keyVariable];
  });

  it('a retry in the tiers and a parked event are dead-lettered destination_deleted, not attempted; replayed once the id exists again, both are delivered', async () => {
    // r-1 fails (500): the deliverer hands it to the retry service, due in RETRY_AFTER.
    await send('r-1');
    await waitUntil(
      () => withId(config.kafka.topics.retry, 'r-1').length > 0,
      60_000,
      'r-1 handed to the retry service',
    );
    assert.equal(triesOf('r-1'), 1);
    // p-1 arrives while the destination is paused: parked.
    await setState('paused');
    await send('p-1');
    // Its parked topic is created by this first park, and read by the deliverer from then on.
    await waitUntil(
      async () => (await metric(deliverer.port, 'sluice_deliverer_parked_total')) >= 1,
      30_000,
      'p-1 parked',
    );
    assert.deepEqual(
      (await readTopic(kafka, parkedTopicName(config, 'billing'), { count: 1 })).map((r) => r.key),
      ['s:p-1'],
    );

    const deleted = await writer.delete({ ...by(), id: 'billing', expectedVersion: 1 });
    assert.equal(deleted.kind, 'deleted', JSON.stringify(deleted));
    await seenByDeliverer();
    const triesAtDeletion = triesOf('r-1');

    // The parked topic is read again at once; the retry when it comes due (it may have been parked meanwhile).
    const deadOf = async (messageId: string) => {
      await waitUntil(
        () => withId(config.kafka.topics.deadLetter, messageId).length > 0,
        60_000,
        `${messageId} dead-lettered`,
      );
      return retryStateFromHeaders(withId(config.kafka.topics.deadLetter, messageId)[0]!.headers);
    };
    const parked = await deadOf('p-1');
    assert.deepEqual(
      [parked.deadReason, parked.lastError, parked.attempts],
      ['destination_deleted', 'destination billing is gone', 0],
    );
    const retried = await deadOf('r-1');
    assert.deepEqual(
      [retried.deadReason, retried.lastError, retried.attempts],
      ['destination_deleted', 'destination billing is gone', 1],
    );
    assert.equal(retried.history.length, 1, 'its attempt history kept');
    assert.equal(triesOf('r-1'), triesAtDeletion, 'nothing attempted after the deletion');
    assert.equal(triesOf('p-1'), 0);
    assert.equal(await deadLettered('billing', 'destination_deleted'), 2);

    // Created again with the id (and its state active again): the replay delivers both.
    failing = false;
    await setState('active');
    const again = await writer.create({ ...by(), definition: definition() });
    assert.equal(again.kind, 'created', JSON.stringify(again));
    await seenByDeliverer();
    const replay = await replayDeadLetters(kafka, config, { destinationId: 'billing', reason: 'destination_deleted' });
    assert.deepEqual([replay.matched, replay.replayed], [2, 2]);
    await waitUntil(() => triesOf('p-1') === 1 && triesOf('r-1') === triesAtDeletion + 1, 60_000, 'both replayed');
    assert.equal(withId(config.kafka.topics.deadLetter, 'r-1').length, 1, 'delivered, not dead-lettered again');
  });
});
