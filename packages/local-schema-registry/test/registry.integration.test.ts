import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startLocalSchemaRegistry, type LocalSchemaRegistry } from '../src/index.ts';
import { processExists } from '@sluice/local-runtime';
import { waitUntil } from '@sluice/testkit';

const skip =
  process.env.SLUICE_SKIP_REGISTRY === '1' ? 'SLUICE_SKIP_REGISTRY=1: not starting a schema registry' : false;

const SUBJECT = 'sluice.events-value';

const envelopeSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'SluiceEvent',
  type: 'object',
  properties: {
    messageId: { type: 'string', minLength: 1 },
    sourceId: { type: 'string' },
    receivedAt: { type: 'string' },
    type: { type: 'string', enum: ['track', 'identify', 'page', 'screen', 'group', 'alias'] },
    event: { type: 'string' },
    properties: { type: 'object' },
  },
  required: ['messageId', 'sourceId', 'receivedAt', 'type'],
};

describe('local schema registry (Apicurio, Confluent-compatible API)', { skip, timeout: 300_000 }, () => {
  let registry: LocalSchemaRegistry;
  let client: SchemaRegistry;
  let schemaId: number;

  before(async () => {
    registry = await startLocalSchemaRegistry({
      ...(process.env.KAFKA_BROKERS ? { kafkaBrokers: process.env.KAFKA_BROKERS } : {}),
    });
    client = new SchemaRegistry({ host: registry.url });
  });

  after(async () => {
    await registry?.stop();
  });

  it('answers GET /subjects on 127.0.0.1 with BACKWARD as global compatibility', async () => {
    assert.match(registry.url, /^http:\/\/127\.0\.0\.1:\d+\/apis\/ccompat\/v7$/);
    const subjects = await fetch(`${registry.url}/subjects`);
    assert.equal(subjects.status, 200);
    assert.ok(Array.isArray(await subjects.json()));
    const config = (await (await fetch(`${registry.url}/config`)).json()) as { compatibilityLevel: string };
    assert.equal(config.compatibilityLevel, 'BACKWARD');
  });

  it('registers a JSON Schema and round-trips the Confluent wire format', async () => {
    ({ id: schemaId } = await client.register(
      { type: SchemaType.JSON, schema: JSON.stringify(envelopeSchema) },
      { subject: SUBJECT },
    ));
    assert.ok(Number.isInteger(schemaId) && schemaId > 0);
    assert.equal(await client.getLatestSchemaId(SUBJECT), schemaId);

    const byId = (await (await fetch(`${registry.url}/schemas/ids/${schemaId}`)).json()) as {
      schema: string;
      schemaType?: string;
    };
    assert.equal(byId.schemaType, 'JSON');
    assert.deepEqual(JSON.parse(byId.schema), envelopeSchema);

    const event = {
      messageId: 'm-1',
      sourceId: 'src-1',
      receivedAt: '2025-01-01T00:00:00.000Z',
      type: 'track',
      event: 'Order Completed',
      properties: { total: 42 },
    };
    const encoded = await client.encode(schemaId, event);
    assert.equal(encoded[0], 0, 'magic byte');
    assert.equal(encoded.readInt32BE(1), schemaId, 'schema id in bytes 1-4');
    assert.deepEqual(JSON.parse(encoded.subarray(5).toString('utf8')), event, 'JSON payload after the header');

    // a fresh client (empty cache) has to fetch the schema by id from the registry
    const fresh = new SchemaRegistry({ host: registry.url });
    assert.deepEqual(await fresh.decode(encoded), event);

    // registering the same schema again, even formatted differently, gives the same id
    const again = await client.register(
      { type: SchemaType.JSON, schema: JSON.stringify(envelopeSchema, null, 2) },
      { subject: SUBJECT },
    );
    assert.equal(again.id, schemaId);
  });

  it('refuses to encode an object that violates the schema', async () => {
    await assert.rejects(
      client.encode(schemaId, { messageId: '', sourceId: 'src-1', type: 'nonsense' }),
      (err: Error) => err.name === 'ConfluentSchemaRegistryValidationError',
    );
  });

  it('checks compatibility: a new required field is not BACKWARD compatible', async () => {
    const incompatible = { ...envelopeSchema, required: [...envelopeSchema.required, 'event'] };
    const res = await fetch(`${registry.url}/compatibility/subjects/${SUBJECT}/versions/latest`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.schemaregistry.v1+json' },
      body: JSON.stringify({ schemaType: 'JSON', schema: JSON.stringify(incompatible) }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { is_compatible: false });
    await assert.rejects(
      client.register({ type: SchemaType.JSON, schema: JSON.stringify(incompatible) }, { subject: SUBJECT }),
      /Incompatible|409/i,
    );
  });

  it('stop() ends the JVM and removes its temp dir', async () => {
    const other = await startLocalSchemaRegistry();
    assert.notEqual(other.url, registry.url);
    assert.ok(existsSync(dirname(other.logFile)));
    await other.stop();
    assert.equal(processExists(other.pid), false);
    assert.equal(existsSync(dirname(other.logFile)), false);
    await other.stop(); // idempotent
  });

  it('a watchdog stops the registry when the process that started it is killed', async () => {
    const script = fileURLToPath(new URL('./fixtures/start-and-report.ts', import.meta.url));
    const parent = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    parent.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await waitUntil(() => out.includes('\n'), 90_000, 'the fixture reporting its registry');
    const { pid, tmpDirs } = JSON.parse(out.split('\n')[0] ?? '{}') as { pid: number; tmpDirs: string[] };
    assert.ok(processExists(pid));
    parent.kill('SIGKILL');
    await waitUntil(() => !processExists(pid), 15_000, 'the registry JVM to be gone');
    await waitUntil(() => tmpDirs.every((d) => !existsSync(d)), 5_000, 'its temp dir to be gone');
  });
});
