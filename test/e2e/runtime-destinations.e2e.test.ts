import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { RETRY_HEADERS } from '@sluice/envelope';
import {
  metric,
  metricSum,
  scrapeMetrics,
  sleep,
  type ReceivedRequest,
  type Receiver,
  startReceiver,
  type TopicWatcher,
  testKafka,
  waitUntil,
  watchTopics,
} from '@sluice/testkit';
import { verifySignature } from '@sluice/webhook-signature';
import { Ledger, ledgerProperties } from '../support/ledger.ts';
import { Pipeline } from '../support/pipeline.ts';
import type { ServiceProcess } from '../support/service-process.ts';

const KEY_VARIABLE = 'SLUICE_E2E_RUNTIME_DESTINATIONS_KEY';
const BASE = '/api/v1/destination-definitions';
/** A destination created through the API takes the events sent to ingest within this long after its 201. */
const SEND_WITHIN_MS = 2_000;
/** A change is in force on every deliverer within this long after the API's answer. */
const APPLY_WITHIN_MS = 1_000;
/** Generous waits for what the product does not bound (first deliveries, retries, starts) on a busy machine. */
const DELIVERED_WITHIN_MS = 60_000;
/** Events per request of the steady streams. */
const STREAM_BATCH = 5;

/** A change made through the API, as the test got its answer. */
interface Answer {
  status: number;
  body: any;
  etag: string | undefined;
  /** When the test had the whole answer (epoch ms). */
  at: number;
}

/** One request of a steady stream: the events ingest acknowledged, when the request was made and answered. */
interface StreamBatch {
  ids: string[];
  sentAt: number;
  ackedAt: number;
}

const idOf = (req: ReceivedRequest) => String(req.headers['x-message-id'] ?? '');
const plainHeaders = (req: ReceivedRequest) =>
  Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));

/**
 * Runtime destinations end to end (docs/reference/runtime-destinations.md): ingest, two
 * deliverers, retry and the delivery log as processes on the real broker, real receivers; every
 * destination is created, changed and deleted through the delivery log's API, as an operator
 * would, and what the endpoints receive is checked against what ingest acknowledged.
 */
describe('runtime destinations through the API, end to end', { timeout: 420_000 }, () => {
  let pipeline: Pipeline;
  let watcher: TopicWatcher;
  let admin: ReturnType<ReturnType<typeof testKafka>['admin']>;
  /** `crm`: endpoints `a` and `b`, then `c` in place of `a`; `billing`: `s1`, then `s2`. */
  const r = {} as Record<'a' | 'b' | 'c' | 's1' | 's2', Receiver>;
  /** What each runtime destination's endpoints logged, checked with the X-Signature secret its 201 gave. */
  const ledgers = new Map<string, Ledger>();
  /** Events `crm`'s endpoints answer 503 (kept on their way back in the retry path). */
  const failing = new Set<string>();
  /** `billing`'s Standard Webhooks secret, as its 201 gave it. */
  let billingWebhookSecret = '';
  /** How long after each change's answer every deliverer had it in force. */
  const applied: { change: string; offset: number; ms: number[] }[] = [];

  const deliverers = (): ServiceProcess[] => [pipeline.service('deliverer'), ...pipeline.replicas];
  const api = async (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
    ifMatch?: string,
  ): Promise<Answer> => {
    const res = await pipeline.deliveryLog(path, {
      method,
      ...(body !== undefined && { body }),
      ...(ifMatch !== undefined && { headers: { 'if-match': ifMatch } }),
    });
    const etag = res.headers.etag;
    return { status: res.status, body: res.body, etag: typeof etag === 'string' ? etag : undefined, at: Date.now() };
  };
  /** Routes `receiver`'s requests through `ledger` (answering 503 to the `failing` events, 200 to the rest). */
  const record = (ledger: Ledger, receiver: Receiver, destination: string) =>
    receiver.behave(
      ledger.recording(
        receiver.url,
        (req) => (failing.has(idOf(req)) ? { status: 503, body: 'busy' } : { status: 200, body: 'ok' }),
        destination,
      ),
    );
  /** Message ids `receiver` answered 2xx (per its destination's ledger). */
  const okAt = (destination: string, receiver: Receiver) =>
    new Set(
      ledgers
        .get(destination)!
        .arrivals.filter((a) => a.endpoint === receiver.url && a.status >= 200 && a.status < 300)
        .map((a) => a.messageId),
    );
  /** Message ids `receiver` was sent, whatever it answered. */
  const seenAt = (receiver: Receiver) => new Set(receiver.requests.map(idOf));
  const requestOf = (receiver: Receiver, messageId: string) => receiver.requests.find((q) => idOf(q) === messageId);

  /** The offset of the catalog record of `id` at `version` (read by the test's own reader of the topic). */
  const changeOffset = (id: string, version: number): number | undefined => {
    for (const rec of watcher.records(pipeline.topics.destinations!)) {
      if (!rec.key?.startsWith(`${id}@`) || rec.value === null) continue;
      if ((JSON.parse(rec.value.toString()) as { version?: number }).version === version) return Number(rec.offset);
    }
    return undefined;
  };

  /**
   * From a change's answer on, scrapes every deliverer's `sluice_destination_catalog_applied_offset`
   * until it passes the change's offset; resolves with how long after the answer each was seen past
   * it (an upper bound: a scrape's time is when its answer came back).
   */
  const measureApply = async (change: string, id: string, version: number, answeredAt: number): Promise<number[]> => {
    const processes = deliverers();
    const seen: { at: number; value: number }[][] = processes.map(() => []);
    let offset: number | undefined;
    const past = (s: { value: number }) => offset !== undefined && s.value > offset;
    const firstPast = () => seen.map((samples) => samples.findIndex(past));
    await waitUntil(
      async () => {
        await Promise.all(
          processes.map(async (svc, i) => {
            if (firstPast()[i]! >= 0) return;
            const value = await metric(svc.url, 'sluice_destination_catalog_applied_offset');
            seen[i]!.push({ at: Date.now(), value });
          }),
        );
        offset ??= changeOffset(id, version);
        return firstPast().every((i) => i >= 0);
      },
      30_000,
      () => `${change} (offset ${offset}) in force on every deliverer: last seen ${seen.map((s) => s.at(-1)?.value)}`,
    );
    const ms = firstPast().map((i, d) => seen[d]![i]!.at - answeredAt);
    // Between the answer of the last scrape before it and the first past it (the first scrape's: in force before it).
    const bounds = firstPast().map((i, d) =>
      i === 0 ? `≤ ${ms[d]} ms` : `${seen[d]![i - 1]!.at - answeredAt}–${ms[d]} ms`,
    );
    applied.push({ change, offset: offset!, ms });
    console.log(
      `applied[${change}]: offset ${offset}, in force on each deliverer ${bounds.join(', ')} after the answer`,
    );
    return ms;
  };

  /** Posts `count` events, one request; resolves with the acknowledged ids (each counted by the pipeline's ledger). */
  const sendEvents = async (count: number): Promise<string[]> => {
    const sent = await pipeline.send(count, { batchSize: count });
    assert.equal(sent.acked, count, 'ingest acknowledged every event');
    return sent.ids;
  };

  /** Requests of `STREAM_BATCH` events one after another until stopped: before, during and after a change. */
  const startStream = () => {
    const batches: StreamBatch[] = [];
    let stopped = false;
    let failed = 0;
    const running = (async () => {
      while (!stopped) {
        const sentAt = Date.now();
        const sent = await pipeline.send(STREAM_BATCH, { batchSize: STREAM_BATCH });
        failed += sent.failed;
        if (sent.ids.length > 0) batches.push({ ids: sent.ids, sentAt, ackedAt: Date.now() });
        // Refused (ingest stopped): try again shortly rather than in a tight loop.
        else await sleep(50);
      }
    })();
    return {
      batches,
      /** Waits until `n` requests made after `t` were acknowledged. */
      waitAfter: (t: number, n: number) =>
        waitUntil(
          () => batches.filter((b) => b.sentAt > t).length >= n,
          DELIVERED_WITHIN_MS,
          `${n} requests after ${t}`,
        ),
      stop: async () => {
        stopped = true;
        await running;
        return { batches, failed };
      },
    };
  };

  /** Every record on `sluice.events` handled by the deliverers: their group committed up to each partition's end. */
  const handledByDeliverers = async () => {
    const groupId = `${(pipeline.raw.kafka as { clientId: string }).clientId}.deliverer`;
    const topic = pipeline.topics.events!;
    const [ends, committed] = await Promise.all([
      admin.fetchTopicOffsets(topic),
      admin.fetchOffsets({ groupId, topics: [topic] }),
    ]);
    const done = new Map(committed[0]!.partitions.map((p) => [p.partition, Number(p.offset)]));
    return ends.every((e) => Number(e.high) === 0 || (done.get(e.partition) ?? -1) >= Number(e.high));
  };

  /** Dead letters of `destination`: message id → reasons. */
  const deadLetters = (destination: string) => {
    const byId = new Map<string, string[]>();
    for (const rec of watcher.records(pipeline.topics.deadLetter!)) {
      if (rec.headers[RETRY_HEADERS.destinationId] !== destination) continue;
      const id = rec.headers[RETRY_HEADERS.messageId]!;
      byId.set(id, [...(byId.get(id) ?? []), rec.headers[RETRY_HEADERS.deadReason] ?? '(none)']);
    }
    return byId;
  };

  before(async () => {
    Object.assign(
      r,
      Object.fromEntries(await Promise.all(['a', 'b', 'c', 's1', 's2'].map(async (k) => [k, await startReceiver()]))),
    );
    pipeline = await Pipeline.start({
      endpoints: [() => ({ status: 200, body: 'ok' })],
      services: ['delivery-log', 'deliverer', 'retry', 'ingest'],
      env: { [KEY_VARIABLE]: randomBytes(32).toString('hex') },
      config: {
        runtimeDestinations: { keyring: [{ id: 'k1', key: { env: KEY_VARIABLE } }] },
        retry: { window: '60s', schedule: ['200ms'], tiers: ['1s'] },
      },
    });
    // A second deliverer in the same consumer group: the partitions are shared between the two.
    await pipeline.startReplica('deliverer');
    const kafka = testKafka({ brokers: pipeline.brokers.split(',') });
    admin = kafka.admin();
    await admin.connect();
    watcher = await watchTopics(kafka, [pipeline.topics.destinations!, pipeline.topics.deadLetter!]);
  });
  after(async () => {
    await watcher?.stop();
    await admin?.disconnect();
    await pipeline?.close();
    await Promise.all(Object.values(r).map((x) => x.close()));
  });

  it('created: an event sent within 2 s of the 201 reaches both endpoints, signed with the secrets the 201 gave', async () => {
    const created = await api('POST', BASE, {
      id: 'crm',
      type: 'webhooks',
      sourceIds: ['ledger'],
      settings: { webhooks: [{ url: r.a.url }, { url: r.b.url }] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.etag, '"1"');
    const [xSignature, ...more] = created.body.secrets as { scheme: string; secret: string }[];
    assert.deepEqual([xSignature?.scheme, more], ['x-signature', []], 'one secret generated: X-Signature, the default');
    ledgers.set('crm', new Ledger(xSignature!.secret));
    record(ledgers.get('crm')!, r.a, 'crm');
    record(ledgers.get('crm')!, r.b, 'crm');
    const applying = measureApply('create crm', 'crm', 1, created.at);
    const sendAfterMs = Date.now() - created.at;
    const [first] = await sendEvents(1);
    const reachedIn = await Promise.all(
      [r.a, r.b].map(async (receiver) => {
        await waitUntil(() => okAt('crm', receiver).has(first!), DELIVERED_WITHIN_MS, `${first} at ${receiver.url}`);
        return requestOf(receiver, first!)!.at - created.at;
      }),
    );
    console.log(
      `create crm: event sent ${sendAfterMs} ms after the 201, delivered ${reachedIn.join(' ms, ')} ms after it`,
    );
    assert.ok(sendAfterMs <= SEND_WITHIN_MS, `sent ${sendAfterMs} ms after the 201`);
    for (const receiver of [r.a, r.b]) {
      const req = requestOf(receiver, first!)!;
      assert.ok(
        verifySignature(xSignature!.secret, req.body, String(req.headers['x-signature'])),
        `X-Signature at ${receiver.url} verifies with the generated secret`,
      );
    }

    // Both schemes chosen, no secret given: one generated for each; the reference library verifies.
    const billing = await api('POST', BASE, {
      id: 'billing',
      type: 'webhooks',
      sourceIds: ['ledger'],
      settings: { webhooks: [{ url: r.s1.url }], signing: { schemes: ['x-signature', 'standard-webhooks'] } },
    });
    assert.equal(billing.status, 201, JSON.stringify(billing.body));
    const secrets = new Map(
      (billing.body.secrets as { scheme: string; secret: string }[]).map((s) => [s.scheme, s.secret]),
    );
    assert.deepEqual([...secrets.keys()].sort(), ['standard-webhooks', 'x-signature']);
    assert.match(secrets.get('standard-webhooks')!, /^whsec_/);
    billingWebhookSecret = secrets.get('standard-webhooks')!;
    ledgers.set('billing', new Ledger(secrets.get('x-signature')!));
    record(ledgers.get('billing')!, r.s1, 'billing');
    const applyingBilling = measureApply('create billing', 'billing', 1, billing.at);
    const billingSendMs = Date.now() - billing.at;
    const [signed] = await sendEvents(1);
    await waitUntil(() => okAt('billing', r.s1).has(signed!), DELIVERED_WITHIN_MS, `${signed} at billing`);
    const req = requestOf(r.s1, signed!)!;
    console.log(
      `create billing: event sent ${billingSendMs} ms after the 201, delivered ${req.at - billing.at} ms after it`,
    );
    assert.ok(billingSendMs <= SEND_WITHIN_MS, `sent ${billingSendMs} ms after the 201`);
    assert.ok(verifySignature(secrets.get('x-signature')!, req.body, String(req.headers['x-signature'])));
    new Webhook(secrets.get('standard-webhooks')!).verify(req.body.toString('utf8'), plainHeaders(req));
    assert.equal(req.headers['webhook-id'], signed);
    // The first event reached crm's endpoints, not billing, which did not exist yet.
    assert.ok(!seenAt(r.s1).has(first!));
    await Promise.all([applying, applyingBilling]);
  });

  it('changed (PATCH with If-Match) under a steady stream: every event sent after the 200 goes to the new URL, none is lost', async () => {
    const stream = startStream();
    await stream.waitAfter(0, 10);
    const read = await api('GET', `${BASE}/crm`);
    assert.equal(read.etag, '"1"');
    record(ledgers.get('crm')!, r.c, 'crm');
    const patchSentAt = Date.now();
    // A merge patch replaces an array whole: the first endpoint moves from a to c, the second stays b.
    const patched = await api(
      'PATCH',
      `${BASE}/crm`,
      { settings: { webhooks: [{ url: r.c.url }, { url: r.b.url }] } },
      read.etag,
    );
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.etag, '"2"');
    assert.deepEqual(patched.body.secrets, [], 'the signing secret is kept');
    const applying = measureApply('patch crm', 'crm', 2, patched.at);
    await stream.waitAfter(patched.at, 10);
    const { batches, failed } = await stream.stop();
    await applying;

    const ids = batches.flatMap((b) => b.ids);
    // Acknowledged after the 200: the request made after it, so the event was written after the
    // change was (a request on its way at the 200 may have been written before the change).
    const afterChange = batches.filter((b) => b.sentAt > patched.at).flatMap((b) => b.ids);
    const before = batches.filter((b) => b.ackedAt < patchSentAt).flatMap((b) => b.ids);
    // Requests on their way while the change was made: written before or after it, either URL is right.
    const during = batches.filter((b) => b.ackedAt >= patchSentAt && b.sentAt <= patched.at);
    const lost = () => {
      const [a, b, c] = [okAt('crm', r.a), okAt('crm', r.b), okAt('crm', r.c)];
      return ids.filter((id) => !(a.has(id) || c.has(id)) || !b.has(id));
    };
    await waitUntil(
      () => lost().length === 0,
      DELIVERED_WITHIN_MS,
      () => `every acknowledged event at crm: ${lost().length} missing`,
    );
    const [atA, atC] = [seenAt(r.a), seenAt(r.c)];
    const byUrl = (list: string[]) =>
      `${list.length} (a ${list.filter((id) => atA.has(id)).length}, c ${list.filter((id) => atC.has(id)).length})`;
    console.log(
      `patch crm: ${ids.length} events acknowledged, ${failed} refused; acknowledged before the PATCH ${byUrl(before)}, during it ${byUrl(during.flatMap((b) => b.ids))} of which acknowledged after the 200 ${byUrl(during.filter((b) => b.ackedAt > patched.at).flatMap((b) => b.ids))}, sent after the 200 ${byUrl(afterChange)}`,
    );
    assert.ok(afterChange.length >= 10 * STREAM_BATCH);
    assert.deepEqual(
      afterChange.filter((id) => atA.has(id) || !atC.has(id)),
      [],
      'every event sent after the 200 went to the new URL only',
    );
    assert.deepEqual(
      ids.filter((id) => atA.has(id) && atC.has(id)),
      [],
      'no event went to both URLs',
    );
    const { duplicates, unexplained } = ledgers.get('crm')!.duplicates();
    assert.deepEqual([duplicates, unexplained.length], [0, 0], 'nothing delivered twice');
    assert.equal(ledgers.get('crm')!.arrivals.filter((a) => !a.signatureOk).length, 0, 'signed with the kept secret');
    // The stream's partitions were shared: each deliverer delivered some of crm's events.
    const perDeliverer = await Promise.all(
      deliverers().map(async (svc) =>
        metricSum(
          (await scrapeMetrics(svc.url))
            .split('\n')
            .filter((l) => l.includes('destination="crm"'))
            .join('\n'),
          'sluice_deliverer_delivered_total',
        ),
      ),
    );
    console.log(`patch crm: deliveries to crm by each deliverer ${perDeliverer.join(', ')}`);
    assert.ok(
      perDeliverer.every((n) => n > 0),
      `both deliverers delivered crm's events: ${perDeliverer}`,
    );
  });

  it('deleted (DELETE with If-Match): events sent after the 200 are attempted nowhere; events on their way back end delivered or dead-lettered', async () => {
    // Events crm's endpoints refuse (503): in the retry path when the destination is deleted.
    const inFlight = Array.from({ length: 4 }, (_, i) => {
      const messageId = pipeline.nextMessageId();
      failing.add(messageId);
      return {
        type: 'track',
        messageId,
        userId: `in-flight-${i}`,
        event: 'Ledger Event',
        properties: ledgerProperties(i),
      };
    });
    const posted = await pipeline.postCalls([inFlight]);
    assert.equal(posted.acked, inFlight.length);
    await waitUntil(
      () => posted.ids.every((id) => seenAt(r.c).has(id) && seenAt(r.b).has(id)),
      DELIVERED_WITHIN_MS,
      'each refused event attempted once at both endpoints',
    );

    const stream = startStream();
    await stream.waitAfter(0, 5);
    const read = await api('GET', `${BASE}/crm`);
    assert.equal(read.etag, '"2"');
    const deleted = await api('DELETE', `${BASE}/crm`, undefined, read.etag);
    assert.equal(deleted.status, 200, JSON.stringify(deleted.body));
    assert.deepEqual(deleted.body, { id: 'crm', version: 3 });
    const applying = measureApply('delete crm', 'crm', 3, deleted.at);
    await stream.waitAfter(deleted.at, 10);
    const { batches } = await stream.stop();
    await applying;

    // As for the change: events whose request was made after the 200.
    const afterDelete = batches.filter((b) => b.sentAt > deleted.at).flatMap((b) => b.ids);
    // Handled: delivered at the file's destination, and the deliverers' group committed past them.
    await waitUntil(
      async () => pipeline.ledger.missing().length === 0 && (await handledByDeliverers()),
      DELIVERED_WITHIN_MS,
      () => `every event handled by the deliverers (${pipeline.ledger.missing().length} not at the file's destination)`,
    );
    const attempted = [r.a, r.b, r.c].map(seenAt);
    assert.ok(afterDelete.length >= 10 * STREAM_BATCH);
    assert.deepEqual(
      afterDelete.filter((id) => attempted.some((s) => s.has(id))),
      [],
      'no event sent after the 200 attempted at any of its URLs',
    );

    // On their way back: delivered (a 2xx at one of its endpoints) or dead-lettered, as documented.
    const ended = () => {
      const [b, c, dead] = [okAt('crm', r.b), okAt('crm', r.c), deadLetters('crm')];
      return posted.ids.filter((id) => b.has(id) || c.has(id) || dead.has(id));
    };
    await waitUntil(
      () => ended().length === posted.ids.length,
      DELIVERED_WITHIN_MS,
      () => `every event on its way back delivered or dead-lettered: ${ended().length} of ${posted.ids.length}`,
    );
    const reasons = new Map<string, number>();
    for (const list of deadLetters('crm').values())
      for (const reason of list) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    console.log(
      `delete crm: ${afterDelete.length} events sent after the 200, none attempted; on their way back: ${posted.ids.length} ended, dead letters by reason ${JSON.stringify(Object.fromEntries(reasons))}`,
    );
    const listed = await api('GET', `${BASE}/crm`);
    assert.equal(listed.status, 404);
  });

  it('a change is in force on both deliverers within 1 s of the 200', async () => {
    const read = await api('GET', `${BASE}/billing`);
    assert.equal(read.etag, '"1"');
    // A replace without signing secrets keeps the current ones.
    const replaced = await api(
      'PUT',
      `${BASE}/billing`,
      {
        id: 'billing',
        type: 'webhooks',
        sourceIds: ['ledger'],
        settings: { webhooks: [{ url: r.s2.url }], signing: { schemes: ['x-signature', 'standard-webhooks'] } },
      },
      read.etag,
    );
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.equal(replaced.etag, '"2"');
    assert.deepEqual(replaced.body.secrets, []);
    record(ledgers.get('billing')!, r.s2, 'billing');
    await measureApply('replace billing', 'billing', 2, replaced.at);
    const table = applied.map((a) => `${a.change}: ${a.ms.join(' ms, ')} ms`).join('; ');
    console.log(`applied on the two deliverers after each change's answer: ${table}`);
    assert.equal(deliverers().length, 2);
    for (const a of applied)
      assert.ok(
        a.ms.every((ms) => ms <= APPLY_WITHIN_MS),
        `${a.change} in force on every deliverer within ${APPLY_WITHIN_MS} ms: ${a.ms.join(', ')} ms`,
      );

    const [moved] = await sendEvents(1);
    await waitUntil(() => okAt('billing', r.s2).has(moved!), DELIVERED_WITHIN_MS, `${moved} at the new URL`);
    assert.ok(!seenAt(r.s1).has(moved!));
  });

  it('after every service restarts: the runtime destinations are still there, events reach the current URL, nothing delivered twice', async (t) => {
    // A steady stream across the restart: refused while ingest is down, acknowledged before and after.
    const stream = startStream();
    await stream.waitAfter(0, 5);
    const from = Date.now();
    const stops = await Promise.all(pipeline.processes().map((svc) => svc.sigterm()));
    const stoppedAt = Date.now();
    await Promise.all(pipeline.processes().map((svc) => svc.start()));
    const to = Date.now();
    for (const ledger of [pipeline.ledger, ...ledgers.values()]) ledger.disruption('restart', from, to);
    await stream.waitAfter(to, 5);
    const { batches, failed } = await stream.stop();
    assert.deepEqual(
      stops.map((s) => s.code),
      pipeline.processes().map(() => 0),
      'every service stopped cleanly (exit 0) under the stream',
    );
    console.log(
      `restart: every service stopped in ${stoppedAt - from} ms (exit codes ${stops.map((s) => s.code).join(', ')}), ready again in ${to - stoppedAt} ms; stream: ${failed} events refused while down`,
    );

    const list = await api('GET', `${BASE}?sourceId=ledger`);
    assert.equal(list.status, 200);
    assert.deepEqual(
      (list.body.definitions as { id: string; origin: string; version?: number }[]).map((d) => [
        d.id,
        d.origin,
        d.version,
      ]),
      [
        ['billing', 'runtime', 2],
        ['ledger-hooks', 'file', undefined],
      ],
      'billing at its version; crm stays deleted',
    );
    for (const svc of deliverers()) assert.equal(await metric(svc.url, 'sluice_runtime_destinations'), 1);

    const ids = batches.flatMap((b) => b.ids);
    const afterRestart = batches.filter((b) => b.sentAt > to).flatMap((b) => b.ids);
    const missing = () => ids.filter((id) => !okAt('billing', r.s2).has(id));
    await waitUntil(
      () => missing().length === 0,
      DELIVERED_WITHIN_MS,
      () => `every acknowledged event at billing's current URL: ${missing().length} missing`,
    );
    assert.ok(afterRestart.length >= 5 * STREAM_BATCH);
    assert.deepEqual(
      ids.filter((id) => seenAt(r.s1).has(id)),
      [],
      'nothing at the URL billing had before',
    );
    const billing = ledgers.get('billing')!;
    assert.equal(billing.arrivals.filter((a) => !a.signatureOk).length, 0, 'every billing request signed');
    const req = requestOf(r.s2, afterRestart[0]!)!;
    new Webhook(billingWebhookSecret).verify(req.body.toString('utf8'), plainHeaders(req));

    await pipeline.settle(DELIVERED_WITHIN_MS);
    const summary = pipeline.report(t, 'runtime destinations');
    assert.equal(summary.lost, 0);
    const all = [pipeline.ledger, ...ledgers.values()];
    const unexplained = all.flatMap((l) => l.duplicates().unexplained);
    // When the duplicates arrived (ms from the stop), and when their event had first been answered 2xx.
    const when = billing.duplicates(Number.NEGATIVE_INFINITY).unexplained.map((d) => [d.firstOkAt - from, d.at - from]);
    const span = (xs: number[]) => (xs.length === 0 ? '-' : `${Math.min(...xs)}…${Math.max(...xs)} ms`);
    console.log(
      `duplicates (file's destination, crm, billing): ${all.map((l) => l.duplicates().duplicates).join(', ')}; explained by the restart: ${all.map((l) => l.duplicates().duplicates - l.duplicates().unexplained.length).join(', ')}; at billing first answered ${span(when.map(([f]) => f!))} and again ${span(when.map(([, a]) => a!))} after the stop began (stopped at ${stoppedAt - from} ms, ready at ${to - from} ms)`,
    );
    assert.deepEqual(unexplained, [], 'nothing delivered twice but what the restart explains');
  });
});
