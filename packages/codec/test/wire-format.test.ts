import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import {
  createJsonCodec,
  createRegistryCodec,
  createSnapshotCodec,
  frameConfluent,
  SchemaRegistryUnavailableError,
  unframeConfluent,
} from '@sluice/codec';
import { track } from './fixtures.ts';

describe('Confluent wire format framing', () => {
  it('writes magic byte 0, the id as int32 big-endian, then the payload untouched', () => {
    const framed = frameConfluent(0x01020304, Buffer.from('{"a":1}'));
    assert.deepEqual([...framed.subarray(0, 5)], [0, 1, 2, 3, 4]);
    assert.equal(framed.subarray(5).toString(), '{"a":1}');
    assert.deepEqual(unframeConfluent(framed), { schemaId: 0x01020304, payload: Buffer.from('{"a":1}') });
  });

  it('does not take plain JSON or a short value for a frame', () => {
    assert.equal(unframeConfluent(Buffer.from('{"a":1}')), undefined);
    assert.equal(unframeConfluent(Buffer.from([0, 0, 0, 1])), undefined);
  });

  it('refuses ids that do not fit an int32', () => {
    assert.throws(() => frameConfluent(-1, Buffer.alloc(0)), RangeError);
    assert.throws(() => frameConfluent(2 ** 31, Buffer.alloc(0)), RangeError);
    assert.throws(() => frameConfluent(1.5, Buffer.alloc(0)), RangeError);
  });
});

describe('registry codec without a reachable registry', () => {
  it('still reads plain JSON records (no registry call needed)', async () => {
    const codec = createRegistryCodec({ url: 'http://127.0.0.1:1/apis/ccompat/v7', unavailableRetryMs: 0 });
    const decoded = await codec.decode(await createJsonCodec().encode(track as never));
    assert.ok(decoded.ok);
    assert.equal(decoded.format, 'json');
    assert.deepEqual(decoded.envelope, track);
  });

  it('a refused connection throws SchemaRegistryUnavailableError after retrying, never a reject verdict', async () => {
    const codec = createRegistryCodec({ url: 'http://127.0.0.1:1/apis/ccompat/v7', unavailableRetryMs: 600 });
    const started = Date.now();
    await assert.rejects(codec.decode(frameConfluent(7, Buffer.from(JSON.stringify(track)))), (err: unknown) => {
      assert.ok(err instanceof SchemaRegistryUnavailableError);
      assert.equal(err.code, 'registry_unavailable');
      assert.equal(err.retryable, true);
      return true;
    });
    assert.ok(Date.now() - started >= 300, 'it retried before giving up');
  });

  it('a registry that accepts but never answers hits the request deadline and is unavailable', async () => {
    const sockets = new Set<Socket>();
    const server: Server = createServer((socket) => sockets.add(socket)); // holds every connection open, says nothing
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const codec = createRegistryCodec({
        url: `http://127.0.0.1:${port}`,
        requestTimeoutMs: 200,
        unavailableRetryMs: 0,
      });
      await assert.rejects(codec.decode(frameConfluent(7, Buffer.from('{}'))), SchemaRegistryUnavailableError);
      await assert.rejects(codec.encode(track as never), SchemaRegistryUnavailableError);
    } finally {
      for (const socket of sockets) socket.destroy();
      server.close();
    }
  });

  it('ids <= 0 are unknown without asking the registry', async () => {
    const codec = createRegistryCodec({ url: 'http://127.0.0.1:1', unavailableRetryMs: 0 });
    const r = await codec.decode(frameConfluent(0, Buffer.from('{}')));
    assert.equal(!r.ok && r.code, 'unknown_schema');
  });
});

describe('snapshot codec (JSON, no registry)', () => {
  const codec = createSnapshotCodec({ topic: 'sluice.audiences' });
  const audience = {
    sourceId: 's',
    audience: 'High Value Users',
    syncId: 'sync-1',
    members: ['u1', 'u2'],
    final: true,
  };
  const trait = { sourceId: 's', trait: 'LTV', syncId: 'sync-1', values: { u1: 10 }, final: false };

  it('round-trips audience and computed-trait snapshots', async () => {
    for (const s of [audience, trait]) {
      const r = await codec.decode(await codec.encode(s));
      assert.ok(r.ok);
      assert.deepEqual(r.value, s);
    }
  });

  const bad: [string, unknown][] = [
    ['no final', { ...audience, final: undefined }],
    ['members not strings', { ...audience, members: [1] }],
    ['both kinds', { ...audience, trait: 'x', values: {} }],
    ['neither kind', { sourceId: 's', syncId: 'x', final: true }],
    ['empty sourceId', { ...trait, sourceId: '' }],
  ];
  for (const [name, value] of bad) {
    it(`rejects ${name}`, async () => {
      const r = await codec.decode(Buffer.from(JSON.stringify(value)));
      assert.equal(!r.ok && r.code, 'invalid_envelope');
    });
  }
});
