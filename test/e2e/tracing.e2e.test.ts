// One event followed end to end (docs/operations.md, "Following one event"): ingest, deliverer,
// retry and the delivery log run as processes on the real broker (ingest trusting its callers' trace
// context, `ingest.trustTraceContext`), exporting spans over OTLP/HTTP to a real receiver in this
// test; the endpoint answers 503 then 200. The call carries a `traceparent`: both webhooks carry one
// of the same trace, and the exported spans form one tree — ingest → produce → delivery →
// attempt (503) → … retry scheduling → delivery → attempt (200); the delivery log's API shows the trace id.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type ExportedSpan,
  type OtlpReceiver,
  prefixedTopics,
  type Receiver,
  startOtlpReceiver,
  startReceiver,
  uniqueName,
  waitUntil,
} from '@sluice/testkit';
import { ServiceProcess, writeConfigFile } from '../support/service-process.ts';

const WRITE_KEY = 'trace-write-key';
const ADMIN_TOKEN = 'trace-admin-token-of-32-characters-or-more';
const BULK_WRITE_KEY = 'trace-bulk-write-key';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('trace context end to end', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-trace-'));
  const prefix = uniqueName('trace');
  const services: ServiceProcess[] = [];
  let otlp: OtlpReceiver;
  let receiver: Receiver;

  before(async () => {
    otlp = await startOtlpReceiver();
    // Each message's first request is refused with a 503, every later one accepted.
    const seen = new Set<string>();
    receiver = await startReceiver({
      behaviour: (req) => {
        if (req.headers['x-batch-id'] !== undefined) return { status: 200, body: 'ok' };
        const id = String(req.headers['x-message-id']);
        if (seen.has(id)) return { status: 200, body: 'ok' };
        seen.add(id);
        return { status: 503, body: 'busy' };
      },
    });
    const configPath = writeConfigFile(join(dir, 'sluice.yaml'), {
      sources: [
        { id: 'shop', writeKeys: [WRITE_KEY] },
        { id: 'bulk', writeKeys: [BULK_WRITE_KEY] },
      ],
      destinations: [
        {
          id: 'hooks',
          type: 'webhooks',
          sourceIds: ['shop'],
          settings: { webhooks: [{ url: receiver.url }], sharedSecret: 'trace-signing-secret' },
        },
        {
          id: 'batched',
          type: 'webhooks',
          sourceIds: ['bulk'],
          settings: { webhooks: [{ url: receiver.url }], sharedSecret: 'trace-signing-secret' },
          batch: { maxEvents: 2, maxWait: '2s' },
        },
      ],
      kafka: { clientId: prefix, partitions: 1, replicationFactor: 1, topics: prefixedTopics(prefix) },
      delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
      retry: { window: '2m', schedule: ['500ms'], tiers: ['1s'] },
      deliveryLog: { adminToken: ADMIN_TOKEN },
      // These callers are trusted: their traces are continued (the default starts a linked trace).
      ingest: { trustTraceContext: true },
    });
    for (const name of ['delivery-log', 'retry', 'deliverer', 'ingest'] as const) {
      const svc = new ServiceProcess(name, {
        SLUICE_CONFIG: configPath,
        KAFKA_BROKERS: process.env.KAFKA_BROKERS!,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.01',
      });
      services.push(svc);
      await svc.start();
    }
  });

  after(async () => {
    await Promise.all(services.map((s) => s.sigterm()));
    await receiver?.close();
    await otlp?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const track = (messageId: string, headers: Record<string, string>, writeKey = WRITE_KEY) =>
    fetch(`${services.at(-1)!.url}/v1/track`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`,
        ...headers,
      },
      body: JSON.stringify({ messageId, userId: 'u1', event: 'Order Completed' }),
    });

  it('a sampled traceparent: the webhooks join its trace and the spans form one tree', async () => {
    const messageId = uniqueName('traced');
    const res = await track(messageId, {
      traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`,
      tracestate: 'vendor=abc',
    });
    assert.equal(res.status, 200, await res.text());
    const requests = () => receiver.requests.filter((r) => r.headers['x-message-id'] === messageId);
    await waitUntil(() => requests().length === 2, 60_000, 'the 503 and the 200');
    const parents = requests().map((r) => String(r.headers.traceparent));
    for (const p of parents) assert.match(p, new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`));
    assert.notEqual(parents[0], parents[1], 'each attempt is its own span');
    assert.equal(requests()[0]!.headers.tracestate, 'vendor=abc');

    const inTrace = () => otlp.spans.filter((s) => s.traceId === TRACE_ID);
    await waitUntil(() => inTrace().filter((s) => s.name === 'POST').length === 2, 30_000, 'both attempt spans');
    const spans = inTrace();
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const parentOf = (s: ExportedSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
    const named = (name: string) => spans.filter((s) => s.name === name);

    // One tree: the only span whose parent is not exported is the caller's child, ingest's request.
    const roots = spans.filter((s) => !parentOf(s));
    assert.deepEqual(
      roots.map((s) => [s.name, s.service, s.parentSpanId]),
      [['POST /v1/track', 'sluice-ingest', CALLER_SPAN]],
    );
    const [produce] = named(`${prefix}.events publish`).length
      ? named(`${prefix}.events publish`)
      : spans.filter((s) => s.name.endsWith('publish'));
    assert.equal(parentOf(produce!)?.name, 'POST /v1/track');
    const deliveries = named('deliver hooks');
    assert.equal(deliveries.length, 2);
    const [first, second] = deliveries.sort(
      (a, b) => Number(a.attributes['sluice.attempt']) - Number(b.attributes['sluice.attempt']),
    );
    assert.equal(parentOf(first!), produce);
    const [schedule] = named('retry schedule');
    assert.equal(schedule?.service, 'sluice-retry');
    assert.equal(parentOf(schedule!), first);
    assert.equal(parentOf(second!), schedule);
    const attempts = named('POST');
    const attemptOf = (d: ExportedSpan) => attempts.find((a) => a.parentSpanId === d.spanId)!;
    assert.equal(attemptOf(first!).attributes['http.response.status_code'], 503);
    assert.equal(attemptOf(first!).status, 2);
    assert.equal(attemptOf(second!).attributes['http.response.status_code'], 200);
    assert.equal(attemptOf(second!).attributes['sluice.endpoint'], receiver.url);
    // Each webhook's traceparent names its attempt's span.
    assert.deepEqual(
      parents.map((p) => p.split('-')[2]),
      [attemptOf(first!).spanId, attemptOf(second!).spanId],
    );

    // The delivery log shows the trace id of the event.
    const deliveryLog = services[0]!;
    await waitUntil(
      async () => {
        const res = await fetch(`${deliveryLog.url}/api/v1/messages/shop/${messageId}`, {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        return res.status === 200 && ((await res.json()) as { traceId: string | null }).traceId === TRACE_ID;
      },
      30_000,
      'the trace id in the delivery log',
    );
  });

  it('an unsampled traceparent is honoured by every service: no span, the context still travels', async () => {
    const messageId = uniqueName('unsampled');
    const traceId = 'a'.repeat(32);
    assert.equal((await track(messageId, { traceparent: `00-${traceId}-${CALLER_SPAN}-00` })).status, 200);
    const requests = () => receiver.requests.filter((r) => r.headers['x-message-id'] === messageId);
    await waitUntil(() => requests().length === 2, 60_000, 'the 503 and the 200');
    for (const r of requests())
      assert.match(String(r.headers.traceparent), new RegExp(`^00-${traceId}-[0-9a-f]{16}-00$`));
    // The sampled trace's spans of the first test arrived within 100 ms of their end; give these as long twice over.
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(otlp.spans.filter((s) => s.traceId === traceId).length, 0);
  });

  it('a call without traceparent that ingest does not sample carries no context past ingest', async () => {
    const messageId = uniqueName('untraced');
    assert.equal((await track(messageId, {})).status, 200);
    const requests = () => receiver.requests.filter((r) => r.headers['x-message-id'] === messageId);
    await waitUntil(() => requests().length === 2, 60_000, 'the 503 and the 200');
    const parents = requests().map((r) => r.headers.traceparent);
    // At a 1 % ratio ingest samples about one call in a hundred: then the webhooks join its trace.
    if (parents[0] !== undefined) {
      for (const p of parents) assert.match(String(p), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      return;
    }
    // Otherwise the trace ends at ingest: no record carries it, no service makes a span, no webhook names one.
    assert.deepEqual(parents, [undefined, undefined]);
    await new Promise((r) => setTimeout(r, 1_000));
    const ids = new Set(
      otlp.spans.filter((s) => s.attributes?.['sluice.message_id'] === messageId).map((s) => s.traceId),
    );
    assert.equal(ids.size, 0);
  });

  it('a batch is a trace of its own, linked to its events; its request carries its attempt span', async () => {
    const traceIds = ['b'.repeat(32), 'c'.repeat(32)];
    for (const [i, traceId] of traceIds.entries()) {
      const res = await track(
        uniqueName(`batched-${i}`),
        { traceparent: `00-${traceId}-${CALLER_SPAN}-01` },
        BULK_WRITE_KEY,
      );
      assert.equal(res.status, 200);
    }
    const batches = () => receiver.requests.filter((r) => r.headers['x-batch-id'] !== undefined);
    await waitUntil(() => batches().length === 1, 30_000, 'one batch of both events');
    assert.equal(batches()[0]!.headers['x-batch-size'], '2');
    const [, batchTrace, attemptSpanId] = String(batches()[0]!.headers.traceparent).split('-');
    assert.ok(batchTrace && !traceIds.includes(batchTrace), 'the batch starts its own trace');
    await waitUntil(
      () => otlp.spans.some((s) => s.name === 'POST' && s.traceId === batchTrace),
      30_000,
      'the batch attempt span',
    );
    const round = otlp.spans.find((s) => s.name === 'deliver batch batched')!;
    assert.equal(round.traceId, batchTrace);
    assert.deepEqual(round.links.map((l) => l.traceId).sort(), traceIds);
    const attempt = otlp.spans.find((s) => s.name === 'POST' && s.traceId === batchTrace)!;
    assert.equal(attempt.parentSpanId, round.spanId);
    assert.equal(attempt.spanId, attemptSpanId);
  });
});
