/**
 * Deletion requests end to end (docs/reference/deletions.md): ingest's `POST /v1/deletions` →
 * `sluice.events` → deliverer → real webhook receivers. A user is deleted across 3 sources, 2 of
 * which have an enabled webhooks destination (the third only a disabled one): exactly 2 delete
 * notifications, each body exactly `{ type, userId, timestamp }`.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createDeliverer } from '@sluice/deliverer';
import { createIngest } from '@sluice/ingest';
import type { RunningService } from '@sluice/service-kit';
import { sleep, startReceiver, testConfig, testServiceContext, type Receiver } from '@sluice/testkit';
import { SIGNATURE_HEADER, verifySignature } from '@sluice/webhook-signature';

const ADMIN = 'e2e-deletions-admin-token-of-32-characters-or-more';
const SECRET = 'e2e-deletions-secret';

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
});

test('a deletion across 3 sources, 2 with an enabled destination → exactly 2 delete notifications', async () => {
  const [signed, unsigned, disabled] = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
  const receivers: Receiver[] = [signed!, unsigned!, disabled!];
  closers.push(...receivers.map((r) => () => r.close()));
  const config = testConfig({
    sources: ['shop', 'app', 'crm'].map((id) => ({ id, writeKeys: [`wk-${id}`] })),
    destinations: [
      {
        id: 'shop-hooks',
        type: 'webhooks',
        sourceIds: ['shop'],
        settings: { webhooks: [{ url: signed!.url }], sharedSecret: SECRET },
      },
      {
        id: 'app-hooks',
        type: 'webhooks',
        sourceIds: ['app'],
        settings: { webhooks: [{ url: unsigned!.url, headers: { 'X-Team': 'app' } }] },
      },
      {
        id: 'crm-hooks',
        type: 'webhooks',
        enabled: false,
        sourceIds: ['crm'],
        settings: { webhooks: [{ url: disabled!.url }], sharedSecret: SECRET },
      },
    ],
    ingest: { adminToken: ADMIN },
    delivery: { ssrf: { allowCidrs: ['127.0.0.0/8'] } },
  });
  const services: RunningService[] = [];
  closers.push(async () => {
    for (const s of services.reverse()) await s.close();
  });
  services.push(await createDeliverer(testServiceContext('deliverer', config), { port: 0 }).start());
  const ingest = await createIngest(testServiceContext('ingest', config), { port: 0 }).start();
  services.push(ingest);

  const requestedAt = Date.now();
  const res = await fetch(`http://127.0.0.1:${ingest.port}/v1/deletions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
    body: JSON.stringify({ userId: 'forget-me' }),
  });
  const answeredAt = Date.now();
  assert.equal(res.status, 202);
  const { id } = (await res.json()) as { id: string };
  assert.equal(typeof id, 'string');

  await Promise.all([signed!.waitFor(1, 20_000), unsigned!.waitFor(1, 20_000)]);
  await sleep(2_000); // a third or repeated notification would arrive by now
  assert.deepEqual(
    receivers.map((r) => r.requests.length),
    [1, 1, 0],
    'exactly one notification per enabled destination',
  );

  for (const receiver of [signed!, unsigned!]) {
    const req = receiver.requests[0]!;
    const body = JSON.parse(req.body.toString('utf8')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['timestamp', 'type', 'userId'], 'no other key');
    assert.equal(body.type, 'delete');
    assert.equal(body.userId, 'forget-me');
    assert.match(String(body.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const at = Date.parse(String(body.timestamp));
    assert.ok(at >= requestedAt - 1 && at <= answeredAt + 1, 'timestamp = when the deletion was requested');
    assert.equal(req.headers['x-message-id'], id, 'X-Message-Id = the deletion id');
    assert.equal(req.headers['content-type'], 'application/json');
    assert.equal(req.method, 'POST');
  }
  const signature = signed!.requests[0]!.headers[SIGNATURE_HEADER.toLowerCase()];
  assert.ok(
    typeof signature === 'string' && verifySignature(SECRET, signed!.requests[0]!.body, signature),
    'valid signature where a secret is set',
  );
  assert.equal(
    unsigned!.requests[0]!.headers[SIGNATURE_HEADER.toLowerCase()],
    undefined,
    'no signature without a secret',
  );
  assert.equal(unsigned!.requests[0]!.headers['x-team'], 'app');
});
