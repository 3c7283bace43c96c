import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startReceiver, type Receiver } from '@sluice/testkit';
import { ownBody, WebhookThread, type WebhookThreadSettings } from '../src/transport/webhook-thread.ts';

const settings = (allowCidrs: string[], origins: string[] = []): WebhookThreadSettings => ({
  pool: { connections: 4 },
  ssrf: { enabled: true, allowCidrs },
  origins,
});

describe('WebhookThread: the undici client in a worker thread, against a real server on 127.0.0.1', () => {
  let http: Receiver;
  before(async () => {
    http = await startReceiver();
  });
  after(() => http.close());

  it('sends each request with its exact bytes and headers and gives each caller its own result', async () => {
    const thread = new WebhookThread(settings(['127.0.0.0/8'], [new URL(http.url).origin]));
    // The status depends on the request, so a result handed to the wrong caller shows.
    http.behave((req) => ({ status: 200 + (Number(req.headers['x-n']) % 3), body: `n=${req.headers['x-n']}` }));
    const n = 300;
    const bodies = Array.from({ length: n }, (_, i) => Buffer.from(JSON.stringify({ i, pad: 'x'.repeat(i) })));
    const results = await Promise.all(
      bodies.map((body, i) =>
        thread.send({
          url: http.url,
          headers: { 'x-n': String(i), 'content-type': 'application/json' },
          body,
          timeoutMs: 5_000,
        }),
      ),
    );
    await thread.close();
    results.forEach((r, i) => {
      assert.equal(r.outcome, 'success');
      assert.equal(r.status, 200 + (i % 3));
      assert.equal(r.responseSnippet, `n=${i}`);
      assert.equal(r.endpoint, http.url);
    });
    const received = new Map(http.requests.slice(-n).map((req) => [Number(req.headers['x-n']), req.body]));
    bodies.forEach((body, i) => assert.ok(received.get(i)?.equals(body), `body ${i} arrived byte for byte`));
  });

  it('a body handed over moves to the thread when it is all of its memory, and is copied otherwise', async () => {
    const thread = new WebhookThread(settings(['127.0.0.0/8'], [new URL(http.url).origin]));
    http.behave(() => ({ status: 200 }));
    const own = Buffer.allocUnsafeSlow(10_000).fill(0x31);
    const pooled = Buffer.from('{"small":true}');
    const sentOwn = Buffer.from(own);
    const sentPooled = Buffer.from(pooled);
    const results = await Promise.all(
      [own, pooled].map((body, i) =>
        thread.send({ url: http.url, headers: { 'x-n': String(i) }, body, timeoutMs: 5_000, bodyHandedOver: true }),
      ),
    );
    await thread.close();
    assert.deepEqual(
      results.map((r) => r.outcome),
      ['success', 'success'],
    );
    const received = new Map(http.requests.slice(-2).map((req) => [Number(req.headers['x-n']), req.body]));
    assert.ok(received.get(0)?.equals(sentOwn), 'the moved body arrived byte for byte');
    assert.ok(received.get(1)?.equals(sentPooled), 'the copied body arrived byte for byte');
    assert.equal(own.length, 0, 'moved, not copied: the caller no longer holds its bytes');
    assert.ok(pooled.equals(sentPooled), "a body sharing Node's pool is copied");
  });

  it("a body that is a view into larger memory crosses as its own bytes, not its whole ArrayBuffer (Node's pool, a fetched Kafka batch)", () => {
    const request = (body: Buffer, handedOver: 'handed-over' | 'kept') => ({
      url: http.url,
      headers: {},
      body,
      timeoutMs: 5_000,
      ...(handedOver === 'handed-over' && { bodyHandedOver: true }),
    });
    // A record's value as kafkajs gives it: 600 bytes of a fetched batch of a megabyte.
    const fetched = Buffer.alloc(1024 * 1024, 0x61);
    const value = fetched.subarray(4_000, 4_600);
    const crossed = ownBody(request(value, 'kept'));
    assert.equal(crossed.buffer.byteLength, 600, 'postMessage copies (and the thread collects) 600 bytes, not 1 MB');
    assert.ok(crossed.equals(value));
    assert.equal(fetched.length, 1024 * 1024, "the caller's memory stays whole");
    const pooled = Buffer.from('{"small":true}');
    assert.ok(pooled.buffer.byteLength > pooled.length, "the test's body shares Node's pool");
    assert.equal(ownBody(request(pooled, 'kept')).buffer.byteLength, pooled.length);
    const whole = Buffer.allocUnsafeSlow(100).fill(1);
    assert.equal(
      ownBody(request(whole, 'handed-over')),
      whole,
      'a body handed over that is all of its memory moves as it is',
    );
    assert.notEqual(
      ownBody(request(whole, 'kept')).buffer,
      whole.buffer,
      'one kept by the caller is copied (it is read again)',
    );
  });

  it('new settings apply to requests sent after them (the SSRF allow-list of a config reload)', async () => {
    const thread = new WebhookThread(settings([]));
    http.behave(() => ({ status: 200 }));
    const calls = http.handlerCalls;
    const refused = await thread.send({ url: http.url, headers: {}, body: Buffer.from('{}'), timeoutMs: 5_000 });
    assert.deepEqual([refused.outcome, refused.error], ['permanent', 'ssrf_blocked']);
    assert.equal(http.handlerCalls, calls, 'no request reached the server');
    thread.update(settings(['127.0.0.0/8']));
    const allowed = await thread.send({ url: http.url, headers: {}, body: Buffer.from('{}'), timeoutMs: 5_000 });
    await thread.close();
    assert.equal(allowed.outcome, 'success');
  });

  it('close lets a request in flight finish; sends during and after it reject at once', async () => {
    const thread = new WebhookThread(settings(['127.0.0.0/8']));
    http.behave(() => ({ status: 204, delayMs: 300 }));
    const inFlight = thread.send({ url: http.url, headers: {}, body: Buffer.from('{}'), timeoutMs: 5_000 });
    const closed = thread.close();
    await assert.rejects(
      thread.send({ url: http.url, headers: {}, body: Buffer.from('{}'), timeoutMs: 5_000 }),
      /closing/,
    );
    await closed;
    assert.equal((await inFlight).status, 204);
    await assert.rejects(
      thread.send({ url: http.url, headers: {}, body: Buffer.from('{}'), timeoutMs: 5_000 }),
      /webhook thread exited/,
    );
    const settled = await Promise.race([
      thread.died.then(() => 'died'),
      new Promise((r) => setTimeout(() => r('pending'), 200)),
    ]);
    assert.equal(settled, 'pending', 'a requested stop is not a death');
  });

  it('a deadline still holds inside the thread: a server that does not answer is a retryable timeout', async () => {
    const thread = new WebhookThread(settings(['127.0.0.0/8']));
    // The clock starts once the thread is up: starting a worker is not part of a request's deadline.
    http.behave(() => ({ status: 200 }));
    await thread.send({ url: http.url, headers: {}, body: Buffer.from('{}'), timeoutMs: 5_000 });
    http.behave(() => ({ status: 200, delayMs: 2_000 }));
    const started = Date.now();
    const r = await thread.send({ url: http.url, headers: {}, body: Buffer.from('{}'), timeoutMs: 300 });
    const took = Date.now() - started;
    await thread.close();
    assert.deepEqual([r.outcome, r.error], ['retryable', 'timeout']);
    assert.ok(took >= 290 && took < 1_500, `aborted after ${took} ms`);
  });
});
