import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  type CatalogOutcome,
  type CatalogProducer,
  CatalogTimeoutError,
  CatalogWriter,
  clearingRecord,
  createDestination,
  deleteDestination,
  emptyCatalog,
  type Written,
} from '@sluice/destination-catalog';
import { Keyring } from '@sluice/secret-keyring';
import { CatalogFollower, type OffsetRecord } from '../src/catalog-follower.ts';
import { context, definition, keyring, T0 } from './fixtures.ts';

const by = { by: 'alice', at: T0 };
const unreadable: string[] = [];
const follower = () => new CatalogFollower({ keyring, onUnreadable: (err) => unreadable.push(err.key) });

/**
 * One partition's log, appended to as a broker would; `deliver` hands each follower the records it
 * has not read yet, so a test chooses when each reader sees what.
 */
function partition() {
  const log: OffsetRecord[] = [];
  const followers: CatalogFollower[] = [];
  const deliver = () => {
    for (const f of followers) for (const r of log.slice(f.appliedOffset)) f.read(r);
  };
  const producer: CatalogProducer = {
    send: async (_topic, messages) => {
      const baseOffset = log.length;
      for (const m of messages)
        log.push({ key: m.key as string, value: (m.value as string | null) ?? null, offset: log.length });
      queueMicrotask(deliver);
      return [{ topicName: 'sluice.destinations', partition: 0, errorCode: 0, baseOffset: String(baseOffset) }];
    },
  };
  return { log, followers, deliver, producer };
}

function writerOn(
  p: ReturnType<typeof partition>,
  reader = follower(),
): { writer: CatalogWriter; reader: CatalogFollower } {
  p.followers.push(reader);
  p.deliver();
  const writer = new CatalogWriter({
    reader,
    producer: p.producer,
    topic: 'sluice.destinations',
    context: () => context,
  });
  return { writer, reader };
}

const written = (outcome: CatalogOutcome): Written => {
  assert.ok(outcome.kind === 'created' || outcome.kind === 'updated', JSON.stringify(outcome));
  return outcome;
};

describe('catalog: the follower', () => {
  it('holds each record in force it cannot decrypt until a later record of its name applies or clears it', () => {
    const readWith = (ring: Keyring) => new CatalogFollower({ keyring: ring, onUnreadable: () => undefined });
    const otherBytes = readWith(new Keyring([{ id: 'k1', key: randomBytes(32) }]));
    const otherId = readWith(new Keyring([{ id: 'k2', key: randomBytes(32) }]));
    const right = readWith(keyring);
    const billing = createDestination(emptyCatalog(), { ...by, definition: definition('billing') }, context) as Written;
    const crm = createDestination(emptyCatalog(), { ...by, definition: definition('crm') }, context) as Written;
    for (const f of [otherBytes, otherId, right]) {
      f.read({ ...billing.record, offset: 0 });
      f.read({ ...crm.record, offset: 1 });
    }
    assert.deepEqual(right.undecryptable, []);
    assert.deepEqual(
      otherBytes.undecryptable.map((e) => e.key),
      [billing.record.key, crm.record.key],
    );
    assert.match(otherBytes.undecryptable[0]!.message, /under key "k1" does not authenticate/);
    assert.match(otherId.undecryptable[0]!.message, /under key "k1", which the keyring does not hold/);
    // billing deleted (a deletion holds no secret): in force and read; crm's record cleared by its key.
    const catalog = { ...emptyCatalog(), destinations: new Map([['billing', billing.entry]]) };
    const deleted = deleteDestination(catalog, { ...by, id: 'billing', expectedVersion: 1 }, context);
    assert.ok(deleted.kind === 'deleted', JSON.stringify(deleted));
    for (const f of [otherBytes, otherId]) {
      f.read({ ...deleted.record, offset: 2 });
      assert.deepEqual(
        f.undecryptable.map((e) => e.key),
        [crm.record.key],
      );
      f.read({ ...clearingRecord(crm.record.key), offset: 3 });
      assert.deepEqual(f.undecryptable, []);
    }
  });

  it('waits for an offset, tells a tracked record’s verdict, reports changes, passes over what it read', async () => {
    const f = follower();
    const changes: string[] = [];
    f.onChange((c) => changes.push(`${c.id}@${c.offset}:${c.entry?.version ?? 'gone'}`));
    const create = createDestination(emptyCatalog(), { ...by, definition: definition('billing') }, context) as Written;
    const track = f.track(create.record.key);
    const waited = f.waitForOffset(0, 1_000);
    f.read({ ...create.record, offset: 0 });
    await waited;
    assert.equal(track.verdict, 'applied');
    assert.equal(f.appliedOffset, 1);
    f.read({ ...create.record, offset: 0 });
    assert.deepEqual(changes, ['billing@0:1'], 'read again: passed over');
    f.read({ key: 'billing@ffffffffffffffff', value: '{', offset: 1 });
    assert.deepEqual(unreadable, ['billing@ffffffffffffffff']);
    f.read({ ...clearingRecord(create.record.key), offset: 2 });
    assert.deepEqual(changes, ['billing@0:1', 'billing@2:gone']);
    await assert.rejects(f.waitForOffset(10, 20), CatalogTimeoutError);
    f.advanceTo(11);
    await f.waitForOffset(10, 20);
  });
});

describe('catalog: the writer', () => {
  it('two writers on the same version: the first in the log wins, the other gets version_conflict (412)', async () => {
    const p = partition();
    const a = writerOn(p);
    const b = writerOn(p);
    const created = written(await a.writer.create({ ...by, definition: definition('billing') }));
    await b.reader.waitForOffset(0, 1_000);
    const replace = (name: string) => ({
      ...by,
      id: 'billing',
      expectedVersion: 1,
      definition: { ...definition('billing'), name },
    });
    const [first, second] = await Promise.all([
      a.writer.replace(replace('from a')),
      b.writer.replace(replace('from b')),
    ]);
    assert.equal(written(first).entry.version, 2);
    assert.deepEqual(second, { kind: 'version_conflict', id: 'billing', expectedVersion: 1, currentVersion: 2 });
    for (const r of [a.reader, b.reader])
      assert.equal(r.current().destinations.get('billing')!.definition.name, 'from a');
    // Both cleared what is no longer in force: the first record and the losing one.
    const cleared = p.log.filter((r) => r.value === null).map((r) => r.key);
    assert.ok(cleared.includes(created.record.key));
    assert.equal(new Set(cleared).size, 2);
  });

  it('two creates of one id: one created, the other version_conflict from version 0', async () => {
    const p = partition();
    const [a, b] = [writerOn(p), writerOn(p)];
    const [x, y] = await Promise.all([
      a.writer.create({ ...by, definition: definition('billing') }),
      b.writer.create({ ...by, definition: definition('billing') }),
    ]);
    assert.equal(x.kind, 'created');
    assert.deepEqual(y, { kind: 'version_conflict', id: 'billing', expectedVersion: 0, currentVersion: 1 });
  });

  it('a destination created again after its deletion goes on from the deletion’s version', async () => {
    const p = partition();
    const { writer } = writerOn(p);
    written(await writer.create({ ...by, definition: definition('billing') }));
    assert.equal((await writer.delete({ ...by, id: 'billing', expectedVersion: 1 })).kind, 'deleted');
    assert.equal(written(await writer.create({ ...by, definition: definition('billing') })).entry.version, 3);
    assert.equal((await writer.delete({ ...by, id: 'billing', expectedVersion: 1 })).kind, 'version_conflict');
  });

  it('a deleted id is its tenant’s: another tenant’s create is refused on every writer, its own goes on', async () => {
    const p = partition();
    const [a, b] = [writerOn(p), writerOn(p)];
    written(await a.writer.create({ ...by, definition: definition('billing') }));
    assert.equal((await a.writer.delete({ ...by, id: 'billing', expectedVersion: 1 })).kind, 'deleted');
    await b.reader.waitForOffset(p.log.length - 1, 1_000);
    assert.deepEqual(b.reader.deletionOf({ kind: 'destination', id: 'billing' }), { version: 2, tenant: 'default' });
    assert.deepEqual(b.reader.deletedIn({ kind: 'destination', tenant: 'default' }), ['billing']);
    assert.deepEqual(
      b.reader.deletedIn({ kind: 'source', tenant: 'default' }),
      [],
      'a destination’s deletion, not a source’s',
    );
    assert.deepEqual(b.reader.deletedIn({ kind: 'destination', tenant: 'globex' }), []);
    const elsewhere = { ...definition('billing'), tenant: 'globex' };
    assert.deepEqual(await b.writer.create({ ...by, definition: elsewhere }), { kind: 'id_reserved', id: 'billing' });
    assert.equal(written(await b.writer.create({ ...by, definition: definition('billing') })).entry.version, 3);
    assert.equal(b.reader.deletionOf({ kind: 'destination', id: 'billing' }), undefined, 'in force again');
    assert.deepEqual(b.reader.deletedIn({ kind: 'destination', tenant: 'default' }), []);
  });

  it('a refused change writes nothing', async () => {
    const p = partition();
    const { writer } = writerOn(p);
    assert.deepEqual(await writer.delete({ ...by, id: 'nope', expectedVersion: 1 }), { kind: 'not_found', id: 'nope' });
    assert.equal(p.log.length, 0);
  });
});

describe('catalog: the writer, for sources', () => {
  it('two changes of a source on one version: one written, the other 412; a destination of the same id apart', async () => {
    const p = partition();
    const [a, b] = [writerOn(p), writerOn(p)];
    const created = await a.writer.createSource({ ...by, source: { id: 'billing', name: 'Billing' } });
    assert.equal(created.kind, 'created', JSON.stringify(created));
    written(await a.writer.create({ ...by, definition: { ...definition('billing'), sourceIds: ['billing'] } }));
    await b.reader.waitForOffset(p.log.length - 1, 1_000);
    const request = { ...by, id: 'billing', expectedVersion: 1 };
    const [minted, revoked] = await Promise.all([
      a.writer.mintWriteKey(request),
      b.writer.renameSource({ ...request, name: 'Billing EU' }),
    ]);
    assert.equal(minted.kind, 'key_minted');
    assert.deepEqual(revoked, { kind: 'version_conflict', id: 'billing', expectedVersion: 1, currentVersion: 2 });
    for (const r of [a.reader, b.reader]) {
      assert.equal(r.current().sources.get('billing')!.definition.writeKeys.length, 2);
      assert.equal(r.current().destinations.get('billing')!.version, 1, 'the destination of the same id is apart');
      assert.equal(r.versionOf('source:billing'), 2);
    }
    // In use by the destination: refused; once the destination is gone, deleted, and created again from its version.
    assert.equal((await a.writer.deleteSource({ ...by, id: 'billing', expectedVersion: 2 })).kind, 'source_in_use');
    assert.equal((await a.writer.delete({ ...by, id: 'billing', expectedVersion: 1 })).kind, 'deleted');
    assert.equal((await a.writer.deleteSource({ ...by, id: 'billing', expectedVersion: 2 })).kind, 'deleted');
    const again = await b.writer.createSource({ ...by, source: { id: 'billing' } });
    assert.ok(again.kind === 'created', JSON.stringify(again));
    assert.equal(again.entry.version, 4);
    // Every source record not in force was cleared.
    const keys = (records: OffsetRecord[]) => records.map((r) => String(r.key));
    const sourceKeys = keys(p.log.filter((r) => r.value !== null)).filter((k) => k.startsWith('source:'));
    const cleared = new Set(keys(p.log.filter((r) => r.value === null)));
    assert.deepEqual(
      sourceKeys.filter((k) => !cleared.has(k)),
      [again.record.key],
    );
  });
});
