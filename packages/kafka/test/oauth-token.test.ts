import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { describeKafkaFailure, OAuthTokenError, oidcTokenProvider, tokenFileProvider } from '@sluice/kafka';

interface TokenRequest {
  authorization: string | undefined;
  contentType: string | undefined;
  form: URLSearchParams;
}

let server: Server;
let endpoint: string;
const requests: TokenRequest[] = [];
let answer: { status: number; body: string } = { status: 200, body: '' };

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}

before(async () => {
  server = createServer((req, res) => {
    void readBody(req).then((text) => {
      requests.push({
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        form: new URLSearchParams(text),
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oauth2/token`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

describe('oauthbearer tokens', () => {
  it('OIDC: client credentials, Basic client auth, the scope; token reused until 80 % of its lifetime', async () => {
    requests.length = 0;
    answer = { status: 200, body: JSON.stringify({ access_token: 'tok-1', token_type: 'Bearer', expires_in: 100 }) };
    let now = 1_000_000;
    const provider = oidcTokenProvider(
      { tokenEndpoint: endpoint, clientId: 'sluice app', clientSecret: 's:3cret', scope: 'kafka' },
      () => now,
    );
    const [a, b] = await Promise.all([provider(), provider()]);
    assert.deepEqual([a, b], [{ value: 'tok-1' }, { value: 'tok-1' }]);
    assert.equal(requests.length, 1, 'concurrent authentications share one request');
    const req = requests[0]!;
    assert.equal(req.authorization, `Basic ${Buffer.from('sluice%20app:s%3A3cret').toString('base64')}`);
    assert.equal(req.contentType, 'application/x-www-form-urlencoded');
    assert.equal(req.form.get('grant_type'), 'client_credentials');
    assert.equal(req.form.get('scope'), 'kafka');
    now += 79_000;
    assert.deepEqual(await provider(), { value: 'tok-1' });
    assert.equal(requests.length, 1);
    answer = { status: 200, body: JSON.stringify({ access_token: 'tok-2', expires_in: 100 }) };
    now += 2_000;
    assert.deepEqual(await provider(), { value: 'tok-2' });
    assert.equal(requests.length, 2);
  });

  it('OIDC: a refused client is an OAuthTokenError naming the endpoint and its answer', async () => {
    answer = { status: 401, body: '{"error":"invalid_client"}' };
    const provider = oidcTokenProvider({ tokenEndpoint: endpoint, clientId: 'c', clientSecret: 'wrong' });
    await assert.rejects(provider(), (err: unknown) => {
      assert.ok(err instanceof OAuthTokenError);
      assert.match(err.message, /answered 401: \{"error":"invalid_client"\}/);
      assert.equal(describeKafkaFailure(err).cause, 'no OAuth token');
      return true;
    });
  });

  it('a token file is read again at every authentication (a rotated token is used at once)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-token-'));
    try {
      const file = join(dir, 'token');
      writeFileSync(file, 'first-token\n');
      const provider = tokenFileProvider(file);
      assert.deepEqual(await provider(), { value: 'first-token' });
      writeFileSync(file, 'second-token');
      assert.deepEqual(await provider(), { value: 'second-token' });
      writeFileSync(file, '  \n');
      await assert.rejects(provider(), /is empty/);
      rmSync(file);
      await assert.rejects(
        provider(),
        (err: unknown) => err instanceof OAuthTokenError && /cannot read kafka\.sasl\.tokenFile/.test(err.message),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('describeKafkaFailure', () => {
  it('names the cause of the failures an operator meets', () => {
    const sasl = Object.assign(new Error('SASL SCRAM SHA512 authentication failed: invalid credentials'), {
      name: 'KafkaJSSASLAuthenticationError',
    });
    assert.equal(describeKafkaFailure(sasl).cause, 'authentication failed');
    const wrapped = Object.assign(new Error('wrapped'), { name: 'KafkaJSNonRetriableError', cause: sasl });
    assert.equal(describeKafkaFailure(wrapped).cause, 'authentication failed');
    const tls = Object.assign(new Error('Connection error: self-signed certificate in certificate chain'), {
      name: 'KafkaJSConnectionError',
      code: 'SELF_SIGNED_CERT_IN_CHAIN',
    });
    assert.equal(describeKafkaFailure(tls).cause, 'certificate not trusted');
    const leaf = Object.assign(new Error('Connection error: unable to verify the first certificate'), {
      name: 'KafkaJSConnectionError',
    });
    assert.equal(describeKafkaFailure(leaf).cause, 'certificate not trusted');
    const host = Object.assign(new Error("Hostname/IP does not match certificate's altnames"), {
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
    });
    assert.equal(describeKafkaFailure(host).cause, 'certificate does not match the broker address');
    const refused = Object.assign(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:1'), {
      name: 'KafkaJSConnectionError',
      code: 'ECONNREFUSED',
    });
    assert.equal(describeKafkaFailure(refused).cause, 'broker unreachable');
    const closed = Object.assign(new Error('Closed connection'), { name: 'KafkaJSConnectionClosedError' });
    assert.equal(describeKafkaFailure(closed).cause, 'connection closed by the broker');
    assert.match(describeKafkaFailure(sasl).line, /^Kafka: authentication failed \(check kafka\.sasl/);
  });
});
