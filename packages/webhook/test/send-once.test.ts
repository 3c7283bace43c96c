import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BlackHole, type Receiver, selfSignedCert, startBlackHole, startReceiver } from '@sluice/testkit';
import {
  AddressPolicy,
  CaFileError,
  DeliveryTimeoutError,
  InvalidEndpointUrlError,
  type SingleRequest,
  SsrfBlockedError,
  sendOnce,
} from '../src/index.ts';

const loopbackOpen = new AddressPolicy({ enabled: true, allowCidrs: ['127.0.0.0/8'] });
const guarded = new AddressPolicy({ enabled: true, allowCidrs: [] });
const body = Buffer.from('{"type":"track","event":"Sluice Test Event"}');

/** A request to `url` with the defaults of these tests: loopback allowed, a 5 s deadline, 1,024 bytes kept. */
const request = (url: string, extra: Partial<SingleRequest> = {}): SingleRequest => ({
  url,
  headers: { 'content-type': 'application/json', 'x-message-id': 'm-1' },
  body,
  timeoutMs: 5_000,
  policy: loopbackOpen,
  keepBytes: 1_024,
  ...extra,
});

describe('sendOnce: one webhook request under the deliverer rules', () => {
  let http: Receiver;
  let https: Receiver;
  let hole: BlackHole;
  before(async () => {
    http = await startReceiver();
    https = await startReceiver({ tls: true });
    hole = await startBlackHole();
  });
  after(async () => {
    await http.close();
    await https.close();
    await hole.close();
  });

  it('POSTs the exact bytes with the headers and answers the status, the latency and the body', async () => {
    http.behave(() => ({ status: 201, body: 'created' }));
    const answer = await sendOnce(request(`${http.url}?q=1`));
    assert.equal(answer.error, undefined);
    assert.equal(answer.status, 201);
    assert.ok(answer.latencyMs > 0);
    assert.equal(answer.body.toString(), 'created');
    assert.equal(answer.truncated, false);
    const got = http.requests.at(-1)!;
    assert.deepEqual([got.method, got.path, got.headers['x-message-id']], ['POST', '/hook?q=1', 'm-1']);
    assert.ok(got.body.equals(body));
  });

  it('keeps the first keepBytes of the answer, and says whether there was more', async () => {
    http.behave(() => ({ status: 500, body: 'é'.repeat(600) + 'x'.repeat(200_000) }));
    const long = await sendOnce(request(http.url));
    assert.equal(long.status, 500);
    assert.equal(long.body.length, 1_024);
    assert.equal(long.truncated, true);
    http.behave(() => ({ status: 200, body: 'y'.repeat(1_024) }));
    const exact = await sendOnce(request(http.url));
    assert.deepEqual([exact.body.length, exact.truncated], [1_024, false]);
    http.behave(() => ({ status: 204 }));
    const empty = await sendOnce(request(http.url));
    assert.deepEqual([empty.status, empty.body.length, empty.truncated], [204, 0, false]);
  });

  it('never follows a redirect', async () => {
    const before = http.requests.length;
    http.behave(() => ({ status: 302, headers: { location: `${http.url}/elsewhere` } }));
    const answer = await sendOnce(request(http.url));
    assert.equal(answer.status, 302);
    assert.equal(http.requests.length, before + 1);
  });

  it('refuses an address the SSRF policy refuses before any connection', async () => {
    const started = Date.now();
    const answer = await sendOnce(request(hole.url, { policy: guarded }));
    assert.ok(answer.error instanceof SsrfBlockedError, String(answer.error));
    assert.equal(answer.status, undefined);
    assert.ok(Date.now() - started < 1_000, 'refused at once, not by the deadline');
    assert.equal(hole.connections, 0, 'no connection was made');
  });

  it('refuses a host name that resolves to a refused address (localhost)', async () => {
    const answer = await sendOnce(request(hole.url.replace('127.0.0.1', 'localhost'), { policy: guarded }));
    assert.ok(answer.error instanceof SsrfBlockedError, String(answer.error));
    assert.equal(hole.connections, 0);
  });

  it('gives up at the deadline when the endpoint never answers', async () => {
    const started = Date.now();
    const answer = await sendOnce(request(hole.url, { timeoutMs: 200 }));
    const took = Date.now() - started;
    assert.ok(answer.error instanceof DeliveryTimeoutError, String(answer.error));
    assert.equal(answer.error.timeoutMs, 200);
    assert.equal(answer.status, undefined);
    assert.ok(took >= 190 && took < 1_000, `took ${took} ms`);
    assert.ok(answer.latencyMs >= 190);
  });

  it('verifies TLS: a self-signed certificate fails, the same one trusted as delivery.caFile passes', async () => {
    const refused = await sendOnce(request(https.url));
    assert.equal((refused.error as { code?: string }).code, 'DEPTH_ZERO_SELF_SIGNED_CERT');
    assert.equal(https.handlerCalls, 0);
    const caFile = join(mkdtempSync(join(tmpdir(), 'send-once-ca-')), 'ca.pem');
    writeFileSync(caFile, selfSignedCert().cert);
    const trusted = await sendOnce(request(https.url, { caFile }));
    assert.equal(trusted.status, 200);
    assert.equal(https.handlerCalls, 1);
  });

  it('answers an unusable URL or CA file with its error, never a throw', async () => {
    const ftp = await sendOnce(request('ftp://127.0.0.1/x'));
    assert.ok(ftp.error instanceof InvalidEndpointUrlError);
    const noCa = await sendOnce(request(http.url, { caFile: '/nonexistent/ca.pem' }));
    assert.ok(noCa.error instanceof CaFileError);
  });

  it('a connection refused is the network error', async () => {
    const closed = await closedPort();
    const answer = await sendOnce(request(`http://127.0.0.1:${closed}/hook`));
    assert.equal((answer.error as { code?: string }).code, 'ECONNREFUSED');
  });
});

/** A port nothing listens on: one a server had, closed again. */
async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
