import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  type CatalogWriter,
  type SourceOutcome,
  type SourceWritten,
  serializeSource,
} from '@sluice/destination-catalog';
import type { SafeProducer } from '@sluice/kafka';
import { writeKeyDigest } from '@sluice/secret-keyring';
import {
  createTestTopics,
  metric,
  startTestCatalog,
  type TestCatalog,
  testKafka,
  uniqueName,
  waitUntil,
} from '@sluice/testkit';
import { basic, ingestConfig, post, type RunningIngest, startIngest, WRITE_KEY } from './helpers.ts';

// Runtime sources in a running ingest, on the real broker: sources created, their keys minted and
// revoked through the catalog's writer, calls authenticated against them within a second.

/** How long a change may take to be in force in ingest, after the writer's answer. */
const APPLY_LIMIT_MS = 1_000;

describe('runtime sources in the running ingest', () => {
  const keyVariable = uniqueName('SLUICE_TEST_KEYRING').replaceAll(/[^A-Za-z0-9_]/g, '_');
  process.env[keyVariable] = randomBytes(32).toString('hex');
  const config = ingestConfig({ runtimeDestinations: { keyring: [{ id: 'k1', key: { env: keyVariable } }] } });
  const kafka = testKafka({ clientId: 'ingest-runtime-sources-test' });
  const by = () => ({ by: 'operator', at: Date.now() });
  let writer: CatalogWriter;
  let catalog: TestCatalog;
  let producer: SafeProducer;
  let ingest: RunningIngest;

  const call = (key: string) =>
    post(`${ingest.url}/v1/track`, { userId: 'u1', event: 'Signed Up' }, { authorization: basic(key) });
  /** Polls until a call with `key` answers `status`; how long after `since` it first did. */
  async function until(key: string, status: number, since: number): Promise<number> {
    for (;;) {
      if ((await call(key)).status === status) return Date.now() - since;
      if (Date.now() - since > 15_000) assert.fail(`a call with the key never answered ${status}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  const written = (outcome: SourceOutcome): SourceWritten => {
    assert.ok('entry' in outcome, JSON.stringify(outcome));
    return outcome;
  };

  before(async () => {
    await createTestTopics(kafka, config);
    catalog = await startTestCatalog(kafka, config);
    ({ writer, producer } = catalog);
  });

  after(async () => {
    await ingest?.service.close();
    await catalog?.close();
    delete process.env[keyVariable];
  });

  it('a source in the catalog at start is accepted from the first call; the file’s keys still are', async () => {
    const early = written(await writer.createSource({ ...by(), source: { id: 'early', name: 'Early' } }));
    ingest = await startIngest(config);
    assert.equal((await call(early.writeKey!.key)).status, 200);
    assert.equal((await call(WRITE_KEY)).status, 200);
    assert.equal(await metric(ingest.url, 'sluice_runtime_sources'), 1);
  });

  it('a key minted is accepted, a key revoked refused (401), each within a second of the change; a deleted source’s keys too', async (t) => {
    const created = written(await writer.createSource({ ...by(), source: { id: 'shop' } }));
    const createdMs = await until(created.writeKey!.key, 200, Date.now());
    const minted = written(await writer.mintWriteKey({ ...by(), id: 'shop', expectedVersion: 1 }));
    const mintedMs = await until(minted.writeKey!.key, 200, Date.now());
    const revoked = written(
      await writer.revokeWriteKey({ ...by(), id: 'shop', expectedVersion: 2, keyId: created.writeKey!.id }),
    );
    const revokedMs = await until(created.writeKey!.key, 401, Date.now());
    assert.equal((await call(minted.writeKey!.key)).status, 200, 'the other key stays');
    const deleted = await writer.deleteSource({ ...by(), id: 'shop', expectedVersion: revoked.entry.version });
    assert.equal(deleted.kind, 'deleted');
    const deletedMs = await until(minted.writeKey!.key, 401, Date.now());
    const figures = { createdMs, mintedMs, revokedMs, deletedMs };
    t.diagnostic(`in force in ingest after the writer's answer: ${JSON.stringify(figures)}`);
    for (const [change, ms] of Object.entries(figures)) assert.ok(ms <= APPLY_LIMIT_MS, `${change}: ${ms} ms`);
  });

  it('a runtime source whose id the file declares is ignored: its key is refused, the file’s accepted', async () => {
    // Written past the writer's checks, as one created before the file declared the id would be.
    const at = new Date().toISOString();
    const record = serializeSource({
      id: 'src-a',
      version: 1,
      updatedAt: at,
      updatedBy: 'operator',
      definition: {
        id: 'src-a',
        name: 'shadow',
        tenant: 'default',
        writeKeys: [{ id: 'wk_shadow', hash: writeKeyDigest('sk_shadow'), createdAt: at }],
      },
    });
    const [sent] = await producer.send(config.kafka.topics.destinations, [record]);
    const offset = Number(sent!.baseOffset);
    await waitUntil(
      async () => (await metric(ingest.url, 'sluice_destination_catalog_applied_offset')) > offset,
      15_000,
      'ingest read the record',
    );
    assert.equal((await call('sk_shadow')).status, 401);
    assert.equal((await call(WRITE_KEY)).status, 200);
  });
});
