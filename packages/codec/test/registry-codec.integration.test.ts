import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import {
  createEnvelopeCodec,
  createJsonCodec,
  createRegistryCodec,
  createSnapshotCodec,
  frameConfluent,
  InvalidValueError,
  SchemaRegistrationError,
  SchemaRegistryUnavailableError,
  valueSubject,
} from '@sluice/codec';
import { envelopeJsonSchema } from '@sluice/envelope';
import { startLocalSchemaRegistry, type LocalSchemaRegistry } from '@sluice/local-schema-registry';

const skip = process.env.SLUICE_SKIP_REGISTRY === '1' ? 'SLUICE_SKIP_REGISTRY=1: no schema registry' : false;

const track = {
  sourceId: 'src-1',
  type: 'track',
  messageId: 'msg-1',
  timestamp: '2026-11-21T23:34:15.123Z',
  receivedAt: '2026-11-21T23:34:15.200Z',
  userId: 'u-1',
  event: 'Order Completed',
  properties: { total: 42, items: ['a', 'b'] },
  context: { ip: '203.0.113.9' },
} as const;

describe('registry codec against a real schema registry (Apicurio)', { skip, timeout: 120_000 }, () => {
  let registry: LocalSchemaRegistry;
  const topic = `codec-test-${process.pid}.events`;

  before(async () => {
    registry = await startLocalSchemaRegistry();
  });
  after(async () => {
    await registry?.stop();
  });

  it('encode registers the envelope schema under <topic>-value and frames the JSON codec bytes', async () => {
    const codec = createRegistryCodec({ url: registry.url, subject: valueSubject(topic) });
    const bytes = await codec.encode(track as never);
    const id = await codec.schemaId();
    assert.equal(bytes[0], 0, 'magic byte');
    assert.equal(bytes.readInt32BE(1), id, 'schema id');
    assert.deepEqual(bytes.subarray(5), await createJsonCodec().encode(track as never), 'payload = JSON codec bytes');

    const client = new SchemaRegistry({ host: registry.url });
    assert.equal(await client.getLatestSchemaId(valueSubject(topic)), id);
    const stored = (await (await fetch(`${registry.url}/schemas/ids/${id}`)).json()) as {
      schema: string;
      schemaType: string;
    };
    assert.equal(stored.schemaType, 'JSON');
    assert.deepEqual(JSON.parse(stored.schema), envelopeJsonSchema);
  });

  it('a fresh codec (empty cache) decodes framed records through the registry, and plain JSON too', async () => {
    const writer = createEnvelopeCodec({ schemaRegistryUrl: registry.url, topic });
    assert.equal(writer.format, 'confluent');
    const reader = createEnvelopeCodec({ schemaRegistryUrl: registry.url, topic });
    const framed = await reader.decode(await writer.encode(track as never));
    assert.ok(framed.ok, JSON.stringify(framed));
    assert.equal(framed.format, 'confluent');
    assert.deepEqual(framed.envelope, track);
    const plain = await reader.decode(Buffer.from(JSON.stringify(track)));
    assert.ok(plain.ok);
    assert.equal(plain.format, 'json');
    assert.deepEqual(plain.envelope, track);
  });

  it('without a URL the factory returns the JSON codec', () => {
    assert.equal(createEnvelopeCodec({ topic }).format, 'json');
    assert.equal(createEnvelopeCodec({ topic, schemaRegistryUrl: '' }).format, 'json');
  });

  it('an unknown schema id is a verdict (unknown_schema), not an outage', async () => {
    const reader = createRegistryCodec({ url: registry.url, subject: valueSubject(topic), unavailableRetryMs: 0 });
    const r = await reader.decode(frameConfluent(999_999, Buffer.from(JSON.stringify(track))));
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.code, 'unknown_schema');
    assert.match(!r.ok ? r.message : '', /999999/);
  });

  it('framed garbage and framed invalid envelopes are rejected with the reason', async () => {
    const codec = createRegistryCodec({ url: registry.url, subject: valueSubject(topic) });
    const id = await codec.schemaId();
    const notJson = await codec.decode(frameConfluent(id, Buffer.from('{nope')));
    assert.equal(!notJson.ok && notJson.code, 'not_json');
    const noEvent = await codec.decode(frameConfluent(id, Buffer.from(JSON.stringify({ ...track, event: undefined }))));
    assert.equal(!noEvent.ok && noEvent.code, 'invalid_envelope');
  });

  it('a record written under a looser upstream schema still has to pass the envelope contract', async () => {
    const client = new SchemaRegistry({ host: registry.url });
    const loose = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { type: { type: 'string' } },
    };
    const { id } = await client.register(
      { type: SchemaType.JSON, schema: JSON.stringify(loose) },
      { subject: `${topic}.loose-value` },
    );
    const codec = createRegistryCodec({ url: registry.url, subject: valueSubject(topic) });
    const r = await codec.decode(await client.encode(id, { type: 'purchase' }));
    assert.equal(!r.ok && r.code, 'invalid_envelope');
    const ok = await codec.decode(await client.encode(id, track));
    assert.ok(ok.ok);
    assert.equal(ok.format, 'confluent');
  });

  it('encode refuses an invalid envelope with InvalidValueError (a caller bug, not retryable)', async () => {
    const codec = createRegistryCodec({ url: registry.url, subject: valueSubject(topic) });
    await assert.rejects(
      codec.encode({ ...track, type: 'alias' } as never),
      (err: unknown) => err instanceof InvalidValueError && !err.retryable,
    );
  });

  it('a BACKWARD-incompatible existing subject makes registration fail with SchemaRegistrationError', async () => {
    const client = new SchemaRegistry({ host: registry.url });
    const subject = `${topic}.taken-value`;
    const old = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { x: { type: 'string' } },
      required: ['x'],
      additionalProperties: false,
    };
    await client.register({ type: SchemaType.JSON, schema: JSON.stringify(old) }, { subject });
    const codec = createRegistryCodec({ url: registry.url, subject });
    await assert.rejects(
      codec.encode(track as never),
      (err: unknown) => err instanceof SchemaRegistrationError && !err.retryable,
    );
  });

  it('several services registering the same fresh subject at once all get the one id', async () => {
    const fresh = `${topic}.race`;
    for (let round = 0; round < 3; round++) {
      const subjectTopic = `${fresh}-${round}`;
      const codecs = [0, 1, 2, 3].map(() =>
        createEnvelopeCodec({ schemaRegistryUrl: registry.url, topic: subjectTopic }),
      );
      const ids = (await Promise.all(codecs.map((c) => c.encode(track as never)))).map((b) => b.readInt32BE(1));
      assert.equal(new Set(ids).size, 1, `one id in round ${round}: ${ids}`);
    }
  });

  it('snapshots: registered under <audiences topic>-value, round-trip, bad ones rejected', async () => {
    const audiences = `codec-test-${process.pid}.audiences`;
    const codec = createSnapshotCodec({ schemaRegistryUrl: registry.url, topic: audiences });
    const snapshot = { sourceId: 's', audience: 'High Value Users', syncId: 'sync-1', members: ['u1'], final: true };
    const bytes = await codec.encode(snapshot);
    assert.equal(bytes[0], 0);
    const client = new SchemaRegistry({ host: registry.url });
    assert.equal(await client.getLatestSchemaId(valueSubject(audiences)), bytes.readInt32BE(1));
    const fresh = createSnapshotCodec({ schemaRegistryUrl: registry.url, topic: audiences });
    const r = await fresh.decode(bytes);
    assert.ok(r.ok);
    assert.deepEqual(r.value, snapshot);
    const bad = await fresh.decode(
      frameConfluent(bytes.readInt32BE(1), Buffer.from(JSON.stringify({ ...snapshot, members: 'u1' }))),
    );
    assert.equal(!bad.ok && bad.code, 'invalid_envelope');
  });

  it('after the registry goes away: encode and cached ids keep working; an uncached id throws, never rejects', async () => {
    const codec = createRegistryCodec({ url: registry.url, subject: valueSubject(topic), unavailableRetryMs: 500 });
    const bytes = await codec.encode(track as never);
    assert.ok((await codec.decode(bytes)).ok);
    await registry.stop();
    const again = await codec.encode({ ...track, messageId: 'msg-2' } as never);
    assert.equal(again.readInt32BE(1), bytes.readInt32BE(1));
    const read = await codec.decode(again);
    assert.ok(read.ok);
    const cold = createRegistryCodec({ url: registry.url, subject: valueSubject(topic), unavailableRetryMs: 500 });
    await assert.rejects(cold.decode(bytes), SchemaRegistryUnavailableError);
  });
});
