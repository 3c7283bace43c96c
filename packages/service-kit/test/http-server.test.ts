// The service's HTTP server closes under a client that keeps its keep-alive connection busy.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Agent, request } from 'undici';
import { createMetricsRegistry, type ServiceHttpServer, startHttpServer } from '@sluice/service-kit';
import { waitUntil } from '@sluice/testkit';

test('close() while a keep-alive connection is busy: its response ends the connection, close resolves while the client keeps sending, later requests are refused', async () => {
  let closed: Promise<number> | undefined;
  let answers = 0;
  const http: ServiceHttpServer = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    ops: { registry: createMetricsRegistry('ingest'), readiness: {} },
    handler: (_req, res) => {
      // The 20th request is in flight when the server closes: its connection is busy, never idle.
      if (++answers === 20) closed = http.close().then(() => Date.now());
      setTimeout(() => res.end('ok'), 5);
    },
  });
  // One connection, kept alive: every request of the client goes on it.
  const agent = new Agent({ connections: 1 });
  const answered: { sentAt: number; close: boolean }[] = [];
  let refused = 0;
  let stop = false;
  const client = (async () => {
    while (!stop) {
      const sentAt = Date.now();
      try {
        const res = await request(`http://127.0.0.1:${http.port}/hook`, {
          method: 'POST',
          body: 'x',
          dispatcher: agent,
        });
        await res.body.text();
        answered.push({ sentAt, close: res.headers.connection === 'close' });
      } catch {
        refused++;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  })();
  try {
    await waitUntil(() => closed !== undefined, 10_000, 'the server closing');
    // Without ending the busy connection, close() waits as long as the client sends on it.
    let closedAt: number | undefined;
    void closed!.then((at) => (closedAt = at));
    await waitUntil(() => closedAt !== undefined, 10_000, 'close() resolved while the client kept sending');
    assert.deepEqual(
      answered.map((a) => a.close),
      [...Array.from({ length: 19 }, () => false), true],
      'kept alive until the close; the answer in flight at the close ends the connection',
    );
    await waitUntil(() => refused > 0, 10_000, 'a request after the close refused');
    assert.equal(answered.filter((a) => a.sentAt > closedAt!).length, 0, 'no request sent once closed is answered');
  } finally {
    stop = true;
    await client;
    http.server.closeAllConnections();
    await agent.close();
  }
});
