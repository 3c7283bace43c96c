import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ReceivedRequest } from '@sluice/testkit';
import { uniqueName, waitUntil } from '@sluice/testkit';
import { Pipeline } from '../support/pipeline.ts';

/**
 * The delivery log end to end (docs/delivery-log.md): ingest, deliverer, retry and delivery-log
 * as processes on the real broker, one real endpoint whose answer depends on the message, and the
 * log's API asked what happened. Run against the embedded database and against PostgreSQL.
 */
/** Admin token of ingest's deletion API in these scenarios. */
const ADMIN_TOKEN = 'delivery-log-scenarios-admin-token-of-32-characters';

export function deliveryLogScenarios(
  label: string,
  database: () => Promise<{ url?: string; close(): Promise<void> }>,
): void {
  describe(`delivery log end to end (${label})`, { timeout: 240_000 }, () => {
    let pipeline: Pipeline;
    let db: { url?: string; close(): Promise<void> };
    const run = uniqueName('dl');
    const seen = new Map<string, number>();
    /** The endpoint: `flaky-*` answers 503, 503, 200; `gone-*` always 404; `revived-*` 404 until revived; others 200. */
    const revived = new Set<string>();
    const behaviour = (req: ReceivedRequest) => {
      const id = String(req.headers['x-message-id'] ?? '');
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      if (id.startsWith(`flaky-${run}`)) return { status: n <= 2 ? 503 : 200, body: n <= 2 ? 'busy' : 'ok' };
      if (id.startsWith(`gone-${run}`)) return { status: 404, body: 'no such hook' };
      if (id.startsWith(`revived-${run}`))
        return revived.has(id) ? { status: 200, body: 'ok' } : { status: 404, body: 'not yet' };
      return { status: 200, body: 'ok' };
    };
    const track = (messageId: string) => ({
      type: 'track',
      messageId,
      userId: 'u-1',
      event: 'Delivery Log Test',
      properties: { n: 1 },
    });
    const message = async (messageId: string) =>
      (await pipeline.deliveryLog(`/api/v1/messages/ledger/${encodeURIComponent(messageId)}`)).body;
    const settled = (messageId: string, state: string, attempts?: number) =>
      waitUntil(
        async () => {
          const res = await pipeline.deliveryLog(`/api/v1/messages/ledger/${encodeURIComponent(messageId)}`);
          if (res.status !== 200) return undefined;
          const d = res.body.deliveries.find(
            (x: { destinationId: string | null }) => x.destinationId === 'ledger-hooks',
          );
          return d?.state === state && (attempts === undefined || res.body.attempts.length >= attempts)
            ? res.body
            : undefined;
        },
        60_000,
        `${messageId} ${state}`,
      );

    before(async () => {
      db = await database();
      pipeline = await Pipeline.start({
        endpoints: [behaviour],
        services: ['delivery-log', 'deliverer', 'retry', 'ingest'],
        partitions: 2,
        config: {
          retry: { window: '60s', schedule: ['200ms'], tiers: ['1s'] },
          delivery: { timeout: '2s' },
          ingest: { adminToken: ADMIN_TOKEN },
          ...(db.url !== undefined && { deliveryLog: { databaseUrl: db.url } }),
        },
      });
    });
    after(async () => {
      await pipeline?.close();
      await db?.close();
    });

    it('a flaky endpoint (503, 503, 200): three attempts and delivered', async () => {
      const id = `flaky-${run}`;
      assert.equal((await pipeline.postBatch([track(id)])).status, 200);
      const m = await settled(id, 'delivered', 3);
      assert.deepEqual(
        m.attempts.map((a: { status: number }) => a.status),
        [503, 503, 200],
      );
      assert.deepEqual(
        m.attempts.map((a: { outcome: string }) => a.outcome),
        ['retryable', 'retryable', 'success'],
      );
      assert.equal(m.event.messageId, id);
      assert.equal(m.event.event, 'Delivery Log Test');
      for (const a of m.attempts) assert.ok(a.latencyMs >= 0 && a.endpoint === pipeline.receivers[0]!.url);
    });

    it('an always-404 endpoint: dead, with the reason and the last error', async () => {
      const id = `gone-${run}`;
      await pipeline.postBatch([track(id)]);
      const m = await settled(id, 'dead', 1);
      const d = m.deliveries.find((x: { destinationId: string }) => x.destinationId === 'ledger-hooks');
      assert.equal(d.deadReason, 'permanent_failure');
      assert.equal(m.attempts[0].status, 404);
      assert.equal(m.attempts[0].responseSnippet, 'no such hook');
    });

    it('a rejected call: rejected with its reason', async () => {
      const id = `bad-${run}`;
      const answer = await pipeline.postBatch([{ type: 'track', messageId: id, userId: 'u-1' }]);
      assert.equal(answer.status, 200);
      const m = await waitUntil(
        async () => {
          const res = await pipeline.deliveryLog(`/api/v1/messages/ledger/${id}`);
          return res.status === 200 ? res.body : undefined;
        },
        30_000,
        'rejection in the log',
      );
      assert.equal(m.deliveries.length, 1);
      assert.equal(m.deliveries[0].state, 'rejected');
      assert.equal(m.deliveries[0].destinationId, null);
      assert.equal(m.deliveries[0].reject.origin, 'ingest');
      assert.match(m.deliveries[0].reject.code, /.+/);
      assert.match(m.deliveries[0].reject.message, /event/);
      const listed = await pipeline.deliveryLog(`/api/v1/messages?sourceId=ledger&state=rejected&messageId=${id}`);
      assert.deepEqual(
        listed.body.messages.map((x: { messageId: string }) => x.messageId),
        [id],
      );
    });

    it('replay through the API: a dead message gets a new attempt and is delivered; a delivered one is sent again', async () => {
      const id = `revived-${run}`;
      await pipeline.postBatch([track(id)]);
      await settled(id, 'dead', 1);
      revived.add(id);
      const replay = await pipeline.deliveryLog(`/api/v1/messages/ledger/${id}/replay`, { method: 'POST' });
      assert.equal(replay.status, 202, JSON.stringify(replay.body));
      assert.equal(replay.body.replayed, 1);
      const m = await settled(id, 'delivered', 2);
      assert.deepEqual(
        m.attempts.map((a: { status: number }) => a.status),
        [404, 200],
      );
      assert.equal(m.replays.length, 1);

      const again = await pipeline.deliveryLog(`/api/v1/messages/ledger/${id}/replay`, {
        method: 'POST',
        body: { destinationId: 'ledger-hooks' },
      });
      assert.equal(again.status, 202);
      const m2 = await waitUntil(
        async () => ((await message(id)).attempts.length >= 3 ? message(id) : undefined),
        30_000,
        'the replayed attempt',
      );
      assert.equal(m2.attempts.at(-1).status, 200);
      assert.equal(m2.deliveries[0].state, 'delivered');
      assert.equal(m2.replays.length, 2);
    });

    it('lists, pages and filters; answers 4xx to bad input and 401 without the token', async () => {
      const flaky = await pipeline.deliveryLog('/api/v1/messages?sourceId=ledger&destinationId=ledger-hooks&limit=1');
      assert.equal(flaky.status, 200);
      assert.equal(flaky.body.messages.length, 1);
      assert.equal(typeof flaky.body.nextCursor, 'string');
      const next = await pipeline.deliveryLog(
        `/api/v1/messages?sourceId=ledger&destinationId=ledger-hooks&limit=1&cursor=${flaky.body.nextCursor}`,
      );
      assert.notEqual(next.body.messages[0].messageId, flaky.body.messages[0].messageId);
      for (const q of [
        'state=lost',
        'limit=0',
        'limit=100000',
        'cursor=%7B',
        `sourceId=${'x'.repeat(300)}`,
        'since=yesterday',
        'colour=red',
      ]) {
        const res = await pipeline.deliveryLog(`/api/v1/messages?${q}`);
        assert.equal(res.status, 400, q);
        assert.equal(res.body.code, 'invalid_parameter');
      }
      const health = await pipeline.deliveryLog('/api/v1/destinations/ledger-hooks/health?window=1h');
      assert.equal(health.status, 200);
      const [endpoint] = health.body.endpoints;
      assert.ok(endpoint.attempts >= 5 && endpoint.successRate > 0 && endpoint.successRate < 1);
      assert.ok(endpoint.p95LatencyMs >= endpoint.p50LatencyMs);
      assert.match(endpoint.lastError.error ?? String(endpoint.lastError.status), /404|503|http/);
      const unauth = await fetch(`${pipeline.service('delivery-log').url}/api/v1/messages`, {
        headers: { authorization: 'Bearer wrong' },
      });
      assert.equal(unauth.status, 401);
      const notFound = await pipeline.deliveryLog('/api/v1/messages/ledger/never-sent');
      assert.equal(notFound.status, 404);
    });

    it("a deletion request removes the user's events from the log; other users' stay", async () => {
      const user = `forget-${run}`;
      const ids = [`forget-a-${run}`, `forget-b-${run}`];
      const kept = `kept-${run}`;
      const present = async (id: string) => {
        const res = await pipeline.deliveryLog(`/api/v1/messages/ledger/${encodeURIComponent(id)}`);
        return res.status === 200 ? res.body : undefined;
      };
      const calls = [...ids.map((id) => ({ ...track(id), userId: user })), track(kept)];
      assert.equal((await pipeline.postBatch(calls)).status, 200);
      for (const id of [...ids, kept]) await waitUntil(() => present(id), 30_000, `${id} in the log`);
      const res = await fetch(`${pipeline.service('ingest').url}/v1/deletions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
        body: JSON.stringify({ userId: user, sourceIds: ['ledger'] }),
      });
      assert.equal(res.status, 202);
      const { id: deletionId } = (await res.json()) as { id: string };
      const started = Date.now();
      await waitUntil(
        async () => {
          const views = await Promise.all(
            ids.map((id) => pipeline.deliveryLog(`/api/v1/messages/ledger/${encodeURIComponent(id)}`)),
          );
          return views.every((v) => v.status === 404) || undefined;
        },
        30_000,
        "the user's events gone from the log",
      );
      const seconds = (Date.now() - started) / 1_000;
      assert.ok(await waitUntil(() => present(deletionId), 10_000, 'the deletion itself in the log'));
      assert.ok(await present(kept), "another user's event stays");
      console.log(`# the user's events left the log ${seconds.toFixed(1)} s after the deletion request`);
    });
  });
}
