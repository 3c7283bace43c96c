/**
 * Runtime sources end to end (docs/reference/runtime-sources.md): the delivery log's API, two ingest
 * processes, the deliverer and a real receiver, each service its own process on real Kafka. A
 * source created through the API: a call with its new key is accepted by both ingest replicas
 * within a second of the `201`, and delivered to a runtime destination that names the source. Its
 * key rotated (a second minted, the first revoked): the revoked one is refused `401` by both
 * replicas within a second, the new one accepted. The catalog topic, read raw, holds no key in clear.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '@sluice/logging';
import { metric, type Receiver, readTopic, startReceiver, testKafka, uniqueName, waitUntil } from '@sluice/testkit';
import { DELIVERY_LOG_TOKEN, Pipeline } from '../support/pipeline.ts';
import { ServiceProcess } from '../support/service-process.ts';

/** How long after the API's answer a change must be in force on every ingest replica. */
const APPLY_LIMIT_MS = 1_000;
const KEY_VARIABLE = 'SLUICE_E2E_RUNTIME_SOURCES_KEYRING';

describe('runtime sources: created, delivered, rotated and revoked across two ingest replicas', {
  timeout: 600_000,
}, () => {
  const run = uniqueName('rs');
  const keyring = randomBytes(32).toString('hex');
  let pipeline: Pipeline;
  let second: ServiceProcess;
  let receiver: Receiver;
  /** Every write key minted: none may be found in the catalog topic. */
  const minted: string[] = [];
  const replicas = () => [
    { name: 'ingest-1', url: pipeline.service('ingest').url },
    { name: 'ingest-2', url: second.url },
  ];

  /** The delivery log's API with the pipeline's token; a change names its version in `ifMatch`. */
  async function api(request: { method: string; path: string; body?: unknown; ifMatch?: string }) {
    const res = await fetch(`${pipeline.service('delivery-log').url}${request.path}`, {
      method: request.method,
      headers: {
        authorization: `Bearer ${DELIVERY_LOG_TOKEN}`,
        ...(request.body !== undefined && { 'content-type': 'application/json' }),
        ...(request.ifMatch !== undefined && { 'if-match': request.ifMatch }),
      },
      ...(request.body !== undefined && { body: JSON.stringify(request.body) }),
    });
    const answeredAt = Date.now();
    return { status: res.status, body: (await res.json()) as any, answeredAt };
  }

  /** One track call to an ingest replica with `key` as the Basic user; its HTTP status. */
  async function track(url: string, key: string, messageId = `${run}-${randomBytes(6).toString('hex')}`) {
    const res = await fetch(`${url}/v1/track`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
      },
      body: JSON.stringify({ userId: 'u-1', event: 'Runtime Source Event', messageId }),
    });
    await res.arrayBuffer();
    return res.status;
  }

  /** Polls every replica with `key` until it answers `status`; per replica, how long after `since` it first did. */
  function untilEach(key: string, status: number, since: number): Promise<{ name: string; ms: number }[]> {
    return Promise.all(
      replicas().map(async ({ name, url }) => {
        for (;;) {
          if ((await track(url, key)) === status) return { name, ms: Date.now() - since };
          if (Date.now() - since > 20_000) assert.fail(`${name} never answered ${status} with the key`);
          await new Promise((r) => setTimeout(r, 10));
        }
      }),
    );
  }

  const report = (what: string, figures: { name: string; ms: number }[]) => {
    const line = `runtime sources: ${what}: ${figures.map((f) => `${f.name} ${f.ms} ms`).join(', ')} (limit ${APPLY_LIMIT_MS} ms)`;
    console.log(line);
    return line;
  };

  before(async () => {
    receiver = await startReceiver();
    pipeline = await Pipeline.start({
      endpoints: [() => ({ status: 200, body: 'ok' })],
      services: ['delivery-log', 'deliverer', 'ingest'],
      partitions: 2,
      config: { runtimeDestinations: { keyring: [{ id: 'k1', key: { env: KEY_VARIABLE } }] } },
      env: { [KEY_VARIABLE]: keyring },
    });
    // A second ingest replica on the same config: each reads the catalog on its own.
    second = new ServiceProcess('ingest', {
      SLUICE_CONFIG: pipeline.configPath,
      KAFKA_BROKERS: pipeline.brokers,
      [KEY_VARIABLE]: keyring,
    });
    await second.start();
  });

  after(async () => {
    await second?.sigterm();
    await pipeline?.close();
    await receiver?.close();
  });

  it('a new source’s key is accepted by every replica within a second of the 201, and its events delivered', async (t) => {
    const created = await api({
      method: 'POST',
      path: '/api/v1/source-definitions',
      body: { id: 'shop', name: 'Shop' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const { key } = created.body.writeKey as { key: string };
    minted.push(key);
    const accepted = await untilEach(key, 200, created.answeredAt);
    t.diagnostic(report('a new key accepted after the 201', accepted));
    for (const { name, ms } of accepted) assert.ok(ms <= APPLY_LIMIT_MS, `${name}: ${ms} ms`);

    // A runtime destination that names the runtime source, to the receiver.
    const destination = await api({
      method: 'POST',
      path: '/api/v1/destination-definitions',
      body: {
        id: 'shop-hooks',
        type: 'webhooks',
        sourceIds: ['shop'],
        settings: { webhooks: [{ url: receiver.url }] },
      },
    });
    assert.equal(destination.status, 201, JSON.stringify(destination.body));
    const deliveryLog = pipeline.service('delivery-log').url;
    const written = await metric(deliveryLog, 'sluice_destination_catalog_applied_offset');
    await waitUntil(
      async () =>
        (await metric(pipeline.service('deliverer').url, 'sluice_destination_catalog_applied_offset')) >= written,
      30_000,
      'the deliverer read the new destination',
    );
    // One event through each replica, with the new key: both delivered to the runtime destination.
    const ids = replicas().map(({ name }) => `${run}-${name}`);
    for (const [i, { url }] of replicas().entries()) assert.equal(await track(url, key, ids[i]), 200);
    await waitUntil(
      async () => ids.every((id) => receiver.requests.some((r) => r.headers['x-message-id'] === id)),
      60_000,
      'both events delivered to the runtime destination',
    );
    const delivered = receiver.requests.find((r) => r.headers['x-message-id'] === ids[0])!;
    assert.equal(JSON.parse(delivered.body.toString()).event, 'Runtime Source Event');
  });

  it('rotated: a minted key is accepted; the revoked one gets 401 on every replica within a second', async (t) => {
    const [first] = minted;
    const source = await api({ method: 'GET', path: '/api/v1/source-definitions/shop' });
    const firstId = (source.body.writeKeys as { id: string }[])[0]!.id;
    const mint = await api({ method: 'POST', path: '/api/v1/source-definitions/shop/write-keys', ifMatch: '"1"' });
    assert.equal(mint.status, 201, JSON.stringify(mint.body));
    const next = mint.body.writeKey.key as string;
    minted.push(next);
    const acceptedNext = await untilEach(next, 200, mint.answeredAt);
    t.diagnostic(report('a minted key accepted after the 201', acceptedNext));

    const revoked = await api({
      method: 'DELETE',
      path: `/api/v1/source-definitions/shop/write-keys/${firstId}`,
      ifMatch: '"2"',
    });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    const refused = await untilEach(first!, 401, revoked.answeredAt);
    t.diagnostic(report('a revoked key refused (401) after the 200', refused));
    for (const { name, ms } of [...acceptedNext, ...refused]) assert.ok(ms <= APPLY_LIMIT_MS, `${name}: ${ms} ms`);
    for (const { url } of replicas()) {
      assert.equal(await track(url, first!), 401, 'the revoked key stays refused');
      assert.equal(await track(url, next), 200, 'the new key stays accepted');
    }
  });

  it('the catalog topic, read raw, holds each key’s SHA-256 and never a key', async () => {
    const kafka = testKafka({
      brokers: pipeline.brokers.split(','),
      clientId: 'runtime-sources-raw',
      logger: createLogger({ name: 'runtime-sources-raw', level: 'error' }),
    });
    const records = await readTopic(kafka, pipeline.topics.destinations!, {
      count: 4,
      timeoutMs: 30_000,
      settleMs: 1_000,
    });
    const raw = records.map((r) => `${r.key ?? ''}\n${r.value?.toString('utf8') ?? ''}`).join('\n');
    assert.match(raw, /source:shop@/, 'the source records are there');
    for (const key of minted) {
      assert.ok(!raw.includes(key), 'a key in clear');
      assert.ok(!raw.includes(key.slice(3, 19)), 'a part of a key');
      assert.ok(!raw.includes(Buffer.from(key).toString('base64')), 'a key in base64');
      assert.ok(raw.includes(createHash('sha256').update(key).digest('hex')), 'its SHA-256 is');
    }
    assert.deepEqual(pipeline.unexpectedExits(), [], 'no service exited by itself');
    assert.deepEqual(second.unexpectedExits, [], 'the second ingest did not exit by itself');
  });
});
