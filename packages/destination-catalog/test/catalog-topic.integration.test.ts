import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import {
  CatalogKeyringError,
  type CatalogOutcome,
  type CatalogReader,
  CatalogWriter,
  startCatalogReader,
  type Written,
} from '@sluice/destination-catalog';
import { type Kafka, SafeProducer, StartupRetry } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { Keyring } from '@sluice/secret-keyring';
import { createTestTopics, readTopic, testConfig, testKafka } from '@sluice/testkit';
import { context, definition, KEY_1, keyring, T0 } from './fixtures.ts';

const logger = createLogger({ name: 'destination-catalog-test', level: process.env.LOG_LEVEL ?? 'warn' });
const by = { by: 'alice', at: T0 };
const written = (outcome: CatalogOutcome): Written => {
  assert.ok(outcome.kind === 'created' || outcome.kind === 'updated', JSON.stringify(outcome));
  return outcome;
};

describe('destination catalog on a real broker', () => {
  const config = testConfig();
  const topic = config.kafka.topics.destinations;
  let kafka: Kafka;
  let producer: SafeProducer;
  const readers: CatalogReader[] = [];

  /** A reader of `on` (the tests' topic unless given) with `ring` (the fixtures' unless given), started. */
  const startReader = async (read: { on?: string; ring?: Keyring } = {}) => {
    const r = await startCatalogReader({
      kafka,
      topic: read.on ?? topic,
      keyring: read.ring ?? keyring,
      logger,
      retry: new StartupRetry({ timeoutMs: 60_000 }).run,
    });
    readers.push(r);
    return r;
  };
  const reader = async () => {
    const r = await startReader();
    await r.ready;
    return r;
  };
  const writer = (r: CatalogReader, on = topic) =>
    new CatalogWriter({ reader: r, producer, topic: on, context: () => context });

  before(async () => {
    kafka = testKafka();
    await createTestTopics(kafka, config);
    producer = new SafeProducer(kafka);
    await producer.connect();
  });
  after(async () => {
    for (const r of readers) await r.close();
    await producer.disconnect();
  });

  it('two writers racing on one version: one wins, the other gets version_conflict; both readers agree', async () => {
    const [a, b] = [await reader(), await reader()];
    const created = written(await writer(a).create({ ...by, definition: definition('race') }));
    await b.waitForOffset(a.appliedOffset - 1, 10_000);
    const replace = (name: string) => ({
      ...by,
      id: 'race',
      expectedVersion: 1,
      definition: { ...definition('race'), name },
    });
    const outcomes = await Promise.all([writer(a).replace(replace('a')), writer(b).replace(replace('b'))]);
    const won = outcomes.filter((o) => o.kind === 'updated');
    const lost = outcomes.filter((o) => o.kind === 'version_conflict');
    assert.equal(won.length, 1, JSON.stringify(outcomes));
    assert.deepEqual(lost, [{ kind: 'version_conflict', id: 'race', expectedVersion: 1, currentVersion: 2 }]);
    const name = (won[0] as Written).entry.definition.name;
    await a.waitForOffset(b.appliedOffset - 1, 10_000);
    for (const r of [a, b]) {
      assert.equal(r.current().destinations.get('race')!.version, 2);
      assert.equal(r.current().destinations.get('race')!.definition.name, name);
    }
    assert.equal(created.entry.version, 1);
  });

  it('a reader started after 1,000 changes catches up and holds what the writer’s reader holds', async () => {
    const first = await reader();
    const w = writer(first);
    for (let i = 0; i < 100; i++) written(await w.create({ ...by, definition: definition(`d${i}`) }));
    for (let round = 1; round <= 9; round++)
      for (let i = 0; i < 100; i++) {
        const request = { ...by, id: `d${i}`, expectedVersion: round, patch: { name: `round ${round}` } };
        written(await w.patch(request));
      }
    const late = await reader();
    assert.ok(late.appliedOffset >= first.appliedOffset - 1);
    assert.deepEqual(late.current(), first.current());
    for (let i = 0; i < 100; i++) assert.equal(late.versionOf(`d${i}`), 10);
  });

  it('a reader whose keys did not write a record in force refuses to start, naming the record and the key', async () => {
    const own = testConfig();
    await createTestTopics(kafka, own);
    const on = own.kafka.topics.destinations;
    const first = await startReader({ on });
    await first.ready;
    const made = written(await writer(first, on).create({ ...by, definition: definition('ledger') }));
    for (const ring of [
      new Keyring([{ id: 'k1', key: randomBytes(32) }]),
      new Keyring([{ id: 'k2', key: randomBytes(32) }]),
    ]) {
      const wrong = await startReader({ on, ring });
      await assert.rejects(wrong.ready, (err: Error) => {
        assert.ok(err instanceof CatalogKeyringError, String(err));
        assert.match(err.message, /^runtimeDestinations\.keyring: 1 record\(s\) in force/);
        assert.ok(err.message.includes(made.record.key), err.message);
        assert.match(err.message, /key "k1"/);
        return true;
      });
    }
    // The keys that wrote it, with a newer key before them (a rotation): ready, the destination read.
    const rotated = await startReader({
      on,
      ring: new Keyring([
        { id: 'k2', key: randomBytes(32) },
        { id: 'k1', key: KEY_1 },
      ]),
    });
    await rotated.ready;
    assert.equal(rotated.current().destinations.get('ledger')?.version, 1);
  });

  it('no record of the topic holds a secret in clear', async () => {
    const r = await reader();
    const secrets = ['pa55-word-xyz', 'Bearer tok-123456', 'shared-987654321', 'query-token-abcdef'];
    const created = written(
      await writer(r).create({
        ...by,
        definition: definition('secrets', {
          webhooks: [
            {
              url: `https://user:${secrets[0]}@hooks.example/in?token=${secrets[3]}`,
              headers: { Authorization: secrets[1] },
            },
          ],
          sharedSecret: secrets[2],
        }),
      }),
    );
    const generated = created.secrets.map((s) => s.secret);
    const records = await readTopic(kafka, topic, { count: r.appliedOffset, settleMs: 200 });
    assert.ok(records.some((rec) => rec.key === created.record.key));
    for (const rec of records) {
      const bytes = Buffer.concat([Buffer.from(rec.key ?? ''), rec.value ?? Buffer.alloc(0)]);
      for (const secret of [...secrets, ...generated])
        assert.equal(bytes.indexOf(secret), -1, `a secret in ${rec.key}`);
    }
  });
});
