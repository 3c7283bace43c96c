// The registry codec against a registry that requires credentials over TLS: the local Apicurio
// registry (which has no simple built-in user store) behind an HTTPS reverse proxy on 127.0.0.1
// that accepts only the configured Basic credentials or bearer token, with a self-signed
// certificate trusted through `caFile`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createEnvelopeCodec,
  SchemaRegistrationError,
  SchemaRegistryUnavailableError,
  type RegistryEnvelopeCodec,
} from '@sluice/codec';
import { startLocalSchemaRegistry, type LocalSchemaRegistry } from '@sluice/local-schema-registry';
import { selfSignedCert } from '@sluice/testkit';

const skip = process.env.SLUICE_SKIP_REGISTRY === '1' ? 'SLUICE_SKIP_REGISTRY=1: no schema registry' : false;
const BASIC = `Basic ${Buffer.from('registry-user:registry-pass').toString('base64')}`;
const BEARER = 'Bearer registry-token';

const track = {
  sourceId: 'src-1',
  type: 'track',
  messageId: 'msg-auth-1',
  timestamp: '2026-11-21T23:34:15.123Z',
  receivedAt: '2026-11-21T23:34:15.200Z',
  userId: 'u-1',
  event: 'Order Completed',
  properties: { total: 42 },
  context: {},
} as const;

describe('registry codec with credentials and a private CA', { skip, timeout: 120_000 }, () => {
  let registry: LocalSchemaRegistry;
  let proxy: Server;
  let url: string;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-registry-auth-'));
  const caFile = join(dir, 'ca.pem');
  const seen: (string | undefined)[] = [];

  before(async () => {
    registry = await startLocalSchemaRegistry();
    const upstream = new URL(registry.url);
    const { key, cert } = selfSignedCert();
    writeFileSync(caFile, cert);
    proxy = createServer({ key, cert }, (req, res) => {
      seen.push(req.headers.authorization);
      if (req.headers.authorization !== BASIC && req.headers.authorization !== BEARER) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Basic realm="registry"' });
        res.end('{"error_code":401,"message":"Unauthorized"}');
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
        fetch(`${upstream.origin}${req.url}`, {
          method: req.method!,
          headers: {
            'content-type': req.headers['content-type'] ?? 'application/json',
            accept: req.headers.accept ?? '*/*',
          },
          ...(body && { body }),
        })
          .then(async (answer) => {
            res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
            res.end(Buffer.from(await answer.arrayBuffer()));
          })
          .catch(() => {
            res.writeHead(502);
            res.end();
          });
      });
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(proxy.address() as AddressInfo).port}${upstream.pathname}`;
  });
  after(async () => {
    await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
    await registry?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Basic credentials and caFile: events are registered, framed and read back through the registry', async () => {
    const topic = `auth-basic-${process.pid}.events`;
    const access = { username: 'registry-user', password: 'registry-pass', caFile };
    const writer = createEnvelopeCodec({ schemaRegistryUrl: url, access, topic });
    const bytes = await writer.encode(track as never);
    assert.equal(bytes[0], 0, 'Confluent framing');
    const reader = createEnvelopeCodec({ schemaRegistryUrl: url, access, topic });
    const read = await reader.decode(bytes);
    assert.ok(read.ok, JSON.stringify(read));
    assert.deepEqual(read.envelope, track);
    // The reader registers the schema in the background too (createEnvelopeCodec); let it finish.
    await (reader as unknown as RegistryEnvelopeCodec).schemaId();
    assert.ok(
      seen.length > 0 && seen.every((h) => h === BASIC),
      `every request carried the Basic credentials: ${seen.join(', ')}`,
    );
  });

  it('a bearer token takes the place of Basic credentials', async () => {
    seen.length = 0;
    const topic = `auth-bearer-${process.pid}.events`;
    const codec = createEnvelopeCodec({
      schemaRegistryUrl: url,
      access: { bearerToken: 'registry-token', caFile },
      topic,
    });
    const read = await codec.decode(await codec.encode(track as never));
    assert.ok(read.ok, JSON.stringify(read));
    assert.ok(seen.length > 0 && seen.every((h) => h === BEARER), seen.join(', '));
  });

  it('wrong credentials are refused by the registry, and an untrusted certificate never reaches it', async () => {
    const topic = `auth-wrong-${process.pid}.events`;
    const wrong = createEnvelopeCodec({
      schemaRegistryUrl: url,
      access: { username: 'registry-user', password: 'nope', caFile },
      topic,
    });
    await assert.rejects(
      wrong.encode(track as never),
      (err: unknown) => err instanceof SchemaRegistrationError || err instanceof SchemaRegistryUnavailableError,
    );
    const before = seen.length;
    const untrusted = createEnvelopeCodec({
      schemaRegistryUrl: url,
      access: { username: 'registry-user', password: 'registry-pass' },
      topic,
      requestTimeoutMs: 2_000,
      unavailableRetryMs: 0,
    });
    await assert.rejects(
      untrusted.encode(track as never),
      (err: unknown) => err instanceof Error && /certificate/i.test(err.message),
    );
    assert.equal(seen.length, before, 'no request got past the TLS handshake');
  });
});
