/**
 * Schema-governed `sluice.events` (docs/reference/envelope.md) end to end: a real schema registry (Apicurio, Confluent
 * API), the real broker, ingest and deliverer in-process, a real webhook receiver.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SchemaRegistry } from '@kafkajs/confluent-schema-registry';
import { createSnapshotCodec, frameConfluent, valueSubject } from '@sluice/codec';
import { createAudienceSync } from '@sluice/audience-sync';
import type { SluiceConfig } from '@sluice/config';
import { createDeliverer } from '@sluice/deliverer';
import { recordKey, REJECT_HEADERS } from '@sluice/envelope';
import { createIngest } from '@sluice/ingest';
import { createKafka, SafeProducer } from '@sluice/kafka';
import { startLocalSchemaRegistry, type LocalSchemaRegistry } from '@sluice/local-schema-registry';
import type { RunningService } from '@sluice/service-kit';
import {
  readTopic,
  startReceiver,
  testConfig,
  testServiceContext,
  type Receiver,
  type ReceivedRequest,
} from '@sluice/testkit';
import { testEnvelope } from '@sluice/testkit';

const skip = process.env.SLUICE_SKIP_REGISTRY === '1' ? 'SLUICE_SKIP_REGISTRY=1: no schema registry' : false;
const WRITE_KEY = 'wk_schema_e2e';
const SOURCE = 'src-schema';

/** Fixed ids and timestamps (no `sentAt`), so both runs must render the same bytes. */
const ts = '2026-11-21T23:34:15.123Z';
const calls = [
  {
    type: 'identify',
    messageId: 'm-identify',
    userId: 'u-1',
    timestamp: ts,
    traits: { email: 'a@example.com', plan: 'pro', nested: { n: 1.5 } },
  },
  {
    type: 'track',
    messageId: 'm-track',
    userId: 'u-1',
    timestamp: ts,
    event: 'Order Completed',
    properties: { total: 42.1, items: ['a', 'ü', '✓'] },
  },
  {
    type: 'page',
    messageId: 'm-page',
    anonymousId: 'anon-2',
    timestamp: ts,
    name: 'Home',
    properties: { path: '/', title: 'Hi' },
  },
  {
    type: 'screen',
    messageId: 'm-screen',
    userId: 'u-3',
    timestamp: ts,
    name: 'Main',
    context: { device: { model: 'X', type: 'ios' } },
  },
  { type: 'group', messageId: 'm-group', userId: 'u-1', timestamp: ts, groupId: 'g-1', traits: { name: 'Acme' } },
  { type: 'alias', messageId: 'm-alias', userId: 'u-new', previousId: 'u-old', timestamp: ts },
];

interface Pipeline {
  config: SluiceConfig;
  receiver: Receiver;
  services: RunningService[];
  ingestUrl: string;
}

async function startPipeline(schemaRegistryUrl: string | undefined): Promise<Pipeline> {
  const receiver = await startReceiver();
  const config = testConfig({
    sources: [{ id: SOURCE, name: 'Schema', writeKeys: [WRITE_KEY] }],
    destinations: [
      {
        id: 'd-schema',
        type: 'webhooks',
        sourceIds: [SOURCE],
        settings: { webhooks: [{ url: receiver.url }], sharedSecret: 'sig' },
      },
    ],
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
  });
  const context = (name: string) => {
    const ctx = testServiceContext(name, config);
    // The services read the registry from the environment (`SCHEMA_REGISTRY_URL` → env.schemaRegistryUrl).
    if (schemaRegistryUrl) ctx.env.schemaRegistryUrl = schemaRegistryUrl;
    else delete ctx.env.schemaRegistryUrl;
    return ctx;
  };
  const deliverer = await createDeliverer(context('deliverer'), { port: 0 }).start();
  const ingest = await createIngest(context('ingest'), { port: 0, host: '127.0.0.1' }).start();
  return { config, receiver, services: [ingest, deliverer], ingestUrl: `http://127.0.0.1:${ingest.port}` };
}

async function stopPipeline(p: Pipeline | undefined): Promise<void> {
  if (!p) return;
  for (const s of p.services) await s.close();
  await p.receiver.close();
}

async function postBatch(p: Pipeline): Promise<void> {
  const res = await fetch(`${p.ingestUrl}/v1/batch`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Basic ${Buffer.from(`${WRITE_KEY}:`).toString('base64')}`,
    },
    body: JSON.stringify({ batch: calls, context: { library: { name: 'e2e', version: '1' } } }),
  });
  assert.equal(res.status, 200, await res.text());
}

const byMessageId = (requests: ReceivedRequest[]) =>
  new Map(requests.map((r) => [String(r.headers['x-message-id']), r] as const));

describe('schema-governed sluice.events through a real schema registry', { skip, timeout: 120_000 }, () => {
  let registry: LocalSchemaRegistry;
  let off: Pipeline | undefined;
  let on: Pipeline | undefined;

  before(async () => {
    registry = await startLocalSchemaRegistry();
  });
  after(async () => {
    await stopPipeline(off);
    await stopPipeline(on);
    await registry?.stop();
  });

  it('registry on: ingest writes the wire format and the webhook bodies are byte-identical to the registry-off run', async () => {
    off = await startPipeline(undefined);
    on = await startPipeline(registry.url);
    await Promise.all([postBatch(off), postBatch(on)]);
    const [plain, governed] = await Promise.all([
      off.receiver.waitFor(calls.length, 30_000),
      on.receiver.waitFor(calls.length, 30_000),
    ]);

    // The registry-on run really went through the registry: framed records with the id of <topic>-value.
    const client = new SchemaRegistry({ host: registry.url });
    const id = await client.getLatestSchemaId(valueSubject(on.config.kafka.topics.events));
    const reader = testServiceContext('reader', on.config);
    const kafka = createKafka({ brokers: reader.brokers, clientId: 'schema-e2e-reader', logger: reader.logger });
    const onRecords = await readTopic(kafka, on.config.kafka.topics.events, { count: calls.length, timeoutMs: 15_000 });
    assert.equal(onRecords.length, calls.length);
    for (const r of onRecords) {
      assert.equal(r.value![0], 0, 'magic byte');
      assert.equal(r.value!.readInt32BE(1), id, 'schema id of <topic>-value');
    }
    const offRecords = await readTopic(kafka, off.config.kafka.topics.events, {
      count: calls.length,
      timeoutMs: 15_000,
    });
    for (const r of offRecords) assert.equal(r.value![0], '{'.charCodeAt(0), 'registry off: plain JSON');

    const a = byMessageId(plain);
    const b = byMessageId(governed);
    assert.deepEqual([...a.keys()].sort(), calls.map((c) => c.messageId).sort());
    for (const [messageId, request] of a) {
      const other = b.get(messageId);
      assert.ok(other, `registry-on run delivered ${messageId}`);
      assert.ok(
        request.body.equals(other.body),
        `body of ${messageId} is byte-identical:\n${request.body}\n${other.body}`,
      );
      assert.equal(request.headers['x-signature'], other.headers['x-signature']);
    }
  });

  it('a direct producer using the registry gets its events delivered; an unknown schema id is rejected and the partition keeps flowing', async () => {
    assert.ok(on, 'the registry-on pipeline runs');
    const topics = on.config.kafka.topics;
    const upstream = testServiceContext('upstream', on.config);
    const kafka = createKafka({ brokers: upstream.brokers, clientId: 'schema-e2e-upstream', logger: upstream.logger });
    const before = on.receiver.requests.length;

    // The recipe of docs/schema-registry-usage.md: look up the id Sluice registered, encode, produce.
    const client = new SchemaRegistry({ host: registry.url });
    const id = await client.getLatestSchemaId(valueSubject(topics.events));
    const event = (messageId: string) =>
      testEnvelope({
        sourceId: SOURCE,
        messageId,
        userId: 'u-direct',
        timestamp: ts,
        receivedAt: ts,
        event: 'Direct Write',
        properties: { via: 'kafka' },
      });
    const key = recordKey(event('x'));
    const producer = new SafeProducer(kafka);
    await producer.connect();
    try {
      // One at a time so the three records are consecutive offsets of one partition.
      await producer.send(topics.events, [{ key, value: await client.encode(id, event('direct-1')) }]);
      await producer.send(topics.events, [
        { key, value: frameConfluent(999_999, Buffer.from(JSON.stringify(event('direct-bogus')))) },
      ]);
      await producer.send(topics.events, [{ key, value: await client.encode(id, event('direct-2')) }]);
    } finally {
      await producer.disconnect();
    }

    await on.receiver.waitFor(before + 2, 30_000);
    const delivered = on.receiver.requests
      .slice(before)
      .map((r) => JSON.parse(r.body.toString()) as { messageId: string; event: string });
    assert.deepEqual(delivered.map((d) => d.messageId).sort(), ['direct-1', 'direct-2']);
    assert.ok(delivered.every((d) => d.event === 'Direct Write'));

    const rejected = await readTopic(kafka, topics.rejected, { count: 1, timeoutMs: 15_000, settleMs: 500 });
    assert.equal(rejected.length, 1, 'exactly the bogus record was rejected');
    const [r] = rejected;
    assert.equal(r!.headers[REJECT_HEADERS.code], 'unknown_schema');
    assert.match(r!.headers[REJECT_HEADERS.message] ?? '', /999999/);
    assert.match(
      r!.headers[REJECT_HEADERS.from] ?? '',
      new RegExp(`^${topics.events.replace(/\./g, '\\.')}/\\d+/\\d+$`),
    );
    assert.equal(r!.value!.readInt32BE(1), 999_999, 'the rejected bytes are the record as written');
  });
  it('audience-sync with the registry: a framed snapshot is read, and its identifies are framed and delivered', async () => {
    assert.ok(on, 'the registry-on pipeline runs');
    const ctx = testServiceContext('audience-sync', on.config);
    ctx.env.schemaRegistryUrl = registry.url;
    const audiences = await createAudienceSync(ctx, { port: 0 }).start();
    on.services.push(audiences);
    const topics = on.config.kafka.topics;
    // An upstream team writes a snapshot through the registry (subject `<audiences topic>-value`).
    const snapshots = createSnapshotCodec({ schemaRegistryUrl: registry.url, topic: topics.audiences });
    const value = await snapshots.encode({
      sourceId: SOURCE,
      audience: 'VIP Members',
      syncId: 'sync-1',
      members: ['vip-1', 'vip-2'],
      final: true,
    } as never);
    assert.equal(value[0], 0, 'snapshot framed');
    const producer = new SafeProducer(
      createKafka({ brokers: ctx.brokers, clientId: 'schema-e2e-snapshots', logger: ctx.logger }),
    );
    await producer.connect();
    await producer.send(topics.audiences, [{ key: `${SOURCE}:VIP Members`, value }]);
    await producer.disconnect();
    const before = on.receiver.requests.length;
    await on.receiver.waitFor(before + 2, 30_000);
    const identifies = on.receiver.requests
      .slice(before)
      .map((r) => JSON.parse(r.body.toString()) as { type: string; userId: string; traits: Record<string, unknown> });
    assert.deepEqual(identifies.map((i) => i.userId).sort(), ['vip-1', 'vip-2']);
    assert.ok(identifies.every((i) => i.type === 'identify' && i.traits.vip_members === true));
    const kafka = createKafka({ brokers: ctx.brokers, clientId: 'schema-e2e-reader2', logger: ctx.logger });
    const events = await readTopic(kafka, topics.events, { count: 100, timeoutMs: 3_000 });
    const emitted = events.filter((r) => r.key?.startsWith(`${SOURCE}:vip-`));
    assert.equal(emitted.length, 2);
    assert.ok(
      emitted.every((r) => r.value![0] === 0),
      'identifies written in the wire format',
    );
  });
});
