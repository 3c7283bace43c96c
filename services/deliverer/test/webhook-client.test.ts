import assert from 'node:assert/strict';
import { lookup as realLookup } from 'node:dns';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { selfSignedCert, startReceiver, type Receiver } from '@sluice/testkit';
import { UndiciWebhookClient } from '../src/transport/webhook-client.ts';
import { AddressPolicy, type LookupFunction } from '@sluice/webhook';

const body = Buffer.from('{"type":"delete","userId":"u","timestamp":"2026-01-01T00:00:00.000Z"}');
const loopbackOpen = new AddressPolicy({ enabled: true, allowCidrs: ['127.0.0.0/8'] });
const guarded = new AddressPolicy({ enabled: true, allowCidrs: [] });

function client(policy: AddressPolicy, extra: { caFile?: string; lookup?: LookupFunction } = {}) {
  return new UndiciWebhookClient({
    settings: () => ({ connections: 4, ...(extra.caFile && { caFile: extra.caFile }) }),
    policy: () => policy,
    ...(extra.lookup && { lookup: extra.lookup }),
  });
}

describe('UndiciWebhookClient against real servers on 127.0.0.1', () => {
  let http: Receiver;
  let https: Receiver;
  before(async () => {
    http = await startReceiver();
    https = await startReceiver({ tls: true });
  });
  after(async () => {
    await http.close();
    await https.close();
  });

  it('POSTs the exact bytes with the given headers and reports success', async () => {
    const c = client(loopbackOpen);
    http.behave(() => ({ status: 202, body: 'accepted' }));
    const r = await c.send({
      url: `${http.url}?a=1`,
      headers: { 'x-message-id': 'm', 'content-type': 'application/json' },
      body,
      timeoutMs: 5_000,
    });
    await c.close();
    assert.equal(r.outcome, 'success');
    assert.equal(r.status, 202);
    assert.equal(r.responseSnippet, 'accepted');
    const got = http.requests.at(-1)!;
    assert.equal(got.method, 'POST');
    assert.equal(got.path, '/hook?a=1');
    assert.ok(got.body.equals(body));
  });

  it('a header value undici refuses (a line break) is invalid_request: permanent, nothing sent', async () => {
    const c = client(loopbackOpen);
    http.behave(() => ({ status: 200 }));
    const before = http.requests.length;
    const bad = await c.send({ url: http.url, headers: { tracestate: 'a=b\r\nx: 1' }, body, timeoutMs: 5_000 });
    const good = await c.send({ url: http.url, headers: { tracestate: 'a=b' }, body, timeoutMs: 5_000 });
    await c.close();
    assert.deepEqual([bad.outcome, bad.error, bad.status], ['permanent', 'invalid_request', undefined]);
    assert.deepEqual([good.outcome, good.status], ['success', 200]);
    assert.equal(http.requests.length, before + 1, 'only the valid request reached the receiver');
    assert.equal(http.requests.at(-1)!.headers.tracestate, 'a=b');
  });

  it('never follows a redirect: 302 is permanent', async () => {
    const c = client(loopbackOpen);
    const before = http.requests.length;
    http.behave(() => ({ status: 302, headers: { location: `${http.url}/elsewhere` } }));
    const r = await c.send({ url: http.url, headers: {}, body, timeoutMs: 5_000 });
    await c.close();
    assert.deepEqual([r.outcome, r.error], ['permanent', 'http_302']);
    assert.equal(http.requests.length, before + 1);
  });

  it('keeps 1 KB of a large body and stops reading at 64 KB', async () => {
    const c = client(loopbackOpen);
    http.behave(() => ({ status: 500, body: 'x'.repeat(2_000_000) }));
    const r = await c.send({ url: http.url, headers: {}, body, timeoutMs: 5_000 });
    await c.close();
    assert.equal(r.outcome, 'retryable');
    assert.equal(r.responseSnippet?.length, 1_000);
  });

  it('aborts at the deadline (connect + response) and calls it retryable', async () => {
    const c = client(loopbackOpen);
    http.behave(() => ({ status: 200, delayMs: 3_000 }));
    const started = Date.now();
    const r = await c.send({ url: http.url, headers: {}, body, timeoutMs: 500 });
    const took = Date.now() - started;
    await c.close();
    http.behave(() => ({ status: 200 }));
    assert.deepEqual([r.outcome, r.error], ['retryable', 'timeout']);
    assert.ok(took >= 480 && took < 800, `took ${took} ms`);
  });

  it('a self-signed certificate fails TLS: permanent, and the handler never runs', async () => {
    const c = client(loopbackOpen);
    const r = await c.send({ url: https.url, headers: {}, body, timeoutMs: 5_000 });
    await c.close();
    assert.equal(r.outcome, 'permanent');
    assert.equal(r.error, 'DEPTH_ZERO_SELF_SIGNED_CERT');
    assert.equal(https.handlerCalls, 0);
  });

  it('trusts a private CA given as delivery.caFile (verification stays on)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'deliverer-ca-'));
    const caFile = join(dir, 'ca.pem');
    writeFileSync(caFile, selfSignedCert().cert);
    const c = client(loopbackOpen, { caFile });
    const r = await c.send({ url: https.url, headers: {}, body, timeoutMs: 5_000 });
    await c.close();
    assert.equal(r.outcome, 'success');
    assert.equal(https.handlerCalls, 1);
  });

  it('connection refused is retryable', async () => {
    const c = client(loopbackOpen);
    const r = await c.send({ url: 'http://127.0.0.1:9/hook', headers: {}, body, timeoutMs: 2_000 });
    await c.close();
    assert.deepEqual([r.outcome, r.error], ['retryable', 'ECONNREFUSED']);
  });

  describe('SSRF guard', () => {
    for (const host of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '[::1]', '[::ffff:127.0.0.1]']) {
      it(`refuses ${host} when not allow-listed, before connecting`, async () => {
        const c = client(guarded);
        const before = http.handlerCalls;
        const started = Date.now();
        const r = await c.send({ url: `http://${host}:${http.port}/hook`, headers: {}, body, timeoutMs: 5_000 });
        await c.close();
        assert.deepEqual([r.outcome, r.error], ['permanent', 'ssrf_blocked']);
        assert.ok(Date.now() - started < 1_000, 'refused at once, not by a timeout');
        assert.equal(http.handlerCalls, before);
      });
    }

    it('refuses a hostname that resolves to loopback (localhost)', async () => {
      const c = client(guarded);
      const before = http.handlerCalls;
      const r = await c.send({ url: `http://localhost:${http.port}/hook`, headers: {}, body, timeoutMs: 5_000 });
      await c.close();
      assert.deepEqual([r.outcome, r.error], ['permanent', 'ssrf_blocked']);
      assert.equal(http.handlerCalls, before);
    });

    it('checks the address DNS actually returns (rebinding): a public-looking name resolving to 169.254.169.254 is refused', async () => {
      let asked = '';
      const rebinding: LookupFunction = (hostname, options, callback) => {
        asked = hostname;
        if ((options as { all?: boolean }).all) callback(null, [{ address: '169.254.169.254', family: 4 }]);
        else callback(null, '169.254.169.254', 4);
      };
      const c = client(guarded, { lookup: rebinding });
      const r = await c.send({ url: 'http://metadata.example.com/latest', headers: {}, body, timeoutMs: 5_000 });
      await c.close();
      assert.equal(asked, 'metadata.example.com');
      assert.deepEqual([r.outcome, r.error], ['permanent', 'ssrf_blocked']);
    });

    it('lets a hostname through when its address is allow-listed', async () => {
      const c = client(loopbackOpen, { lookup: realLookup as unknown as LookupFunction });
      http.behave(() => ({ status: 200 }));
      const r = await c.send({ url: `http://localhost:${http.port}/hook`, headers: {}, body, timeoutMs: 5_000 });
      await c.close();
      assert.equal(r.outcome, 'success');
    });
  });
});
