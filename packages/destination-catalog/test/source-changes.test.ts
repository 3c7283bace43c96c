import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Catalog,
  createDestination,
  createSource,
  deleteSource,
  emptyCatalog,
  MAX_ACTIVE_WRITE_KEYS,
  MAX_REVOKED_WRITE_KEYS,
  mergeDestinations,
  mergeSources,
  mintWriteKey,
  OUTCOME_STATUS,
  parseRecord,
  renameSource,
  revokeWriteKey,
  type SourceEntry,
  type SourceOutcome,
  type SourceWritten,
  showSource,
} from '@sluice/destination-catalog';
import { writeKeyDigest } from '@sluice/secret-keyring';
import { catalogOf, context, definition, entry, keyring, T0 } from './fixtures.ts';

const by = { by: 'alice', at: T0 };

function expectWritten(outcome: SourceOutcome): SourceWritten {
  assert.ok(
    outcome.kind === 'created' ||
      outcome.kind === 'updated' ||
      outcome.kind === 'key_minted' ||
      outcome.kind === 'key_revoked',
    JSON.stringify(outcome),
  );
  return outcome;
}

/** A catalog with these runtime sources (and destinations). */
const withSources = (sources: SourceEntry[], catalog: Catalog = emptyCatalog()): Catalog => ({
  destinations: catalog.destinations,
  sources: new Map(sources.map((s) => [s.id, s])),
  tokens: catalog.tokens,
});

const created = (id: string, name?: string) =>
  expectWritten(createSource(emptyCatalog(), { ...by, source: { id, ...(name && { name }) } }, context));

/** The versioned request of a change of `entry` at its version, `at` ms after T0. */
const on = (entry: SourceEntry, later = 0) => ({
  by: 'alice',
  at: T0 + later,
  id: entry.id,
  expectedVersion: entry.version,
});

describe('runtime sources: create', () => {
  it('mints the first write key, shown once; the record keeps its SHA-256 only', () => {
    const outcome = created('shop', 'Shop');
    assert.equal(outcome.kind, 'created');
    assert.equal(OUTCOME_STATUS[outcome.kind], 201);
    const { entry, record, writeKey } = outcome;
    assert.ok(writeKey);
    assert.match(writeKey.key, /^sk_[A-Za-z0-9_-]{43}$/);
    assert.match(writeKey.id, /^wk_[0-9a-f]{12}$/);
    assert.equal(entry.version, 1);
    assert.equal(entry.updatedAt, new Date(T0).toISOString());
    assert.deepEqual(entry.definition, {
      id: 'shop',
      name: 'Shop',
      tenant: 'default',
      writeKeys: [{ id: writeKey.id, hash: writeKeyDigest(writeKey.key), createdAt: writeKey.createdAt }],
    });
    assert.match(record.key, /^source:shop@[0-9a-f]{16}$/);
    assert.ok(!record.value!.includes(writeKey.key), 'the key is not in the record');
    assert.ok(!record.value!.includes(writeKey.key.slice(3, 20)), 'nor a part of it');
    assert.deepEqual(parseRecord(record, keyring), { kind: 'source', key: record.key, entry });
    assert.notEqual(created('shop').writeKey!.key, writeKey.key, 'a new key each time');
  });

  it('refuses an id the file declares (naming the file), one taken, and an id or name the file would refuse', () => {
    assert.deepEqual(createSource(emptyCatalog(), { ...by, source: { id: 'web' } }, context), {
      kind: 'file_declared',
      id: 'web',
      file: '/etc/sluice/config.yaml',
    });
    const shop = created('shop').entry;
    assert.deepEqual(createSource(withSources([shop]), { ...by, source: { id: 'shop' } }, context), {
      kind: 'id_taken',
      id: 'shop',
      version: 1,
    });
    const refused = (source: unknown) => createSource(emptyCatalog(), { ...by, source }, context);
    assert.deepEqual(refused({ id: 'a b' }), {
      kind: 'invalid',
      field: 'id',
      problem: 'must match pattern "^[A-Za-z0-9._-]+$"',
    });
    assert.deepEqual(refused({ name: 'x' }), { kind: 'invalid', field: 'id', problem: 'is required' });
    assert.deepEqual(refused({ id: 'x', writeKeys: ['k'] }), {
      kind: 'invalid',
      field: 'writeKeys',
      problem: 'is not a known setting',
    });
    assert.equal(refused('shop').kind, 'invalid');
    assert.deepEqual(createSource(emptyCatalog(), { by: '', at: T0, source: { id: 'x' } }, context), {
      kind: 'invalid',
      field: 'updatedBy',
      problem: 'must be 1–200 characters',
    });
  });

  it('goes on from the version of a deletion of the id', () => {
    const again = createSource(emptyCatalog(), { ...by, source: { id: 'shop' }, deleted: { version: 4 } }, context);
    assert.equal(expectWritten(again).entry.version, 5);
  });

  it('never hands an id to another tenant: one in force there, or deleted there, is refused without telling of it', () => {
    const shop = created('shop').entry;
    const elsewhere = { id: 'shop', tenant: 'globex' };
    assert.deepEqual(createSource(withSources([shop]), { ...by, source: elsewhere }, context), {
      kind: 'id_reserved',
      id: 'shop',
    });
    assert.equal(OUTCOME_STATUS.id_reserved, 409);
    const deleted = { version: 2, tenant: 'default' };
    assert.deepEqual(createSource(emptyCatalog(), { ...by, source: elsewhere, deleted }, context), {
      kind: 'id_reserved',
      id: 'shop',
    });
    const back = createSource(emptyCatalog(), { ...by, source: { id: 'shop' }, deleted }, context);
    assert.equal(expectWritten(back).entry.version, 3, 'its own tenant takes it back');
    const unnamed = createSource(emptyCatalog(), { ...by, source: elsewhere, deleted: { version: 2 } }, context);
    assert.equal(
      expectWritten(unnamed).entry.definition.tenant,
      'globex',
      'a deletion naming no tenant reserves nothing',
    );
  });
});

describe('runtime sources: versioned changes', () => {
  it('rename: one version on, If-Match by version; the file’s sources are the file’s', () => {
    const shop = created('shop').entry;
    const catalog = withSources([shop]);
    const renamed = expectWritten(renameSource(catalog, { ...on(shop, 1_000), name: 'Shop EU' }, context));
    assert.equal(renamed.kind, 'updated');
    assert.equal(renamed.entry.version, 2);
    assert.equal(renamed.entry.definition.name, 'Shop EU');
    assert.deepEqual(renamed.entry.definition.writeKeys, shop.definition.writeKeys, 'keys kept');
    assert.equal(renamed.writeKey, undefined, 'no key shown');
    assert.deepEqual(renameSource(catalog, { ...on(shop), expectedVersion: 3, name: 'x' }, context), {
      kind: 'version_conflict',
      id: 'shop',
      expectedVersion: 3,
      currentVersion: 1,
    });
    assert.deepEqual(renameSource(catalog, { ...on(shop), name: 7 }, context), {
      kind: 'invalid',
      field: 'name',
      problem: 'must be string',
    });
    assert.deepEqual(renameSource(catalog, { ...on(shop), id: 'nope', name: 'x' }, context), {
      kind: 'not_found',
      id: 'nope',
    });
    assert.deepEqual(renameSource(catalog, { ...on(shop), id: 'app', name: 'x' }, context), {
      kind: 'file_declared',
      id: 'app',
      file: '/etc/sluice/config.yaml',
    });
  });

  it('mint: a new key beside the others, shown once; at most MAX_ACTIVE_WRITE_KEYS in force', () => {
    let shop = created('shop').entry;
    const minted = expectWritten(mintWriteKey(withSources([shop]), on(shop), context));
    assert.equal(minted.kind, 'key_minted');
    assert.equal(OUTCOME_STATUS[minted.kind], 201);
    assert.equal(minted.entry.definition.writeKeys.length, 2);
    assert.equal(minted.entry.definition.writeKeys[1]!.hash, writeKeyDigest(minted.writeKey!.key));
    assert.ok(!minted.record.value!.includes(minted.writeKey!.key));
    shop = minted.entry;
    while (shop.definition.writeKeys.length < MAX_ACTIVE_WRITE_KEYS)
      shop = expectWritten(mintWriteKey(withSources([shop]), on(shop), context)).entry;
    assert.deepEqual(mintWriteKey(withSources([shop]), on(shop), context), {
      kind: 'invalid',
      field: 'writeKeys',
      problem: `at most ${MAX_ACTIVE_WRITE_KEYS} write keys in force: revoke one first`,
    });
  });

  it('revoke: by key id, stamped; the merge leaves it out; a second revoke and an unknown key are refused', () => {
    const first = created('shop');
    const minted = expectWritten(mintWriteKey(withSources([first.entry]), on(first.entry), context));
    const keyId = first.writeKey!.id;
    const revoked = expectWritten(
      revokeWriteKey(withSources([minted.entry]), { ...on(minted.entry, 60_000), keyId }, context),
    );
    assert.equal(revoked.kind, 'key_revoked');
    assert.equal(revoked.entry.definition.writeKeys[0]!.revokedAt, new Date(T0 + 60_000).toISOString());
    const catalog = withSources([revoked.entry]);
    assert.deepEqual(revokeWriteKey(catalog, { ...on(revoked.entry), keyId }, context), {
      kind: 'already_revoked',
      id: 'shop',
      keyId,
      revokedAt: new Date(T0 + 60_000).toISOString(),
    });
    assert.deepEqual(revokeWriteKey(catalog, { ...on(revoked.entry), keyId: 'wk_000000000000' }, context), {
      kind: 'key_not_found',
      id: 'shop',
      keyId: 'wk_000000000000',
    });
    const merged = mergeSources(context.file, catalog).sources.find((s) => s.id === 'shop')!;
    assert.deepEqual(merged, {
      id: 'shop',
      name: '',
      tenant: 'default',
      writeKeys: [],
      writeKeyDigests: [writeKeyDigest(minted.writeKey!.key)],
    });
    assert.deepEqual(showSource(revoked.entry).writeKeys, [
      { id: keyId, createdAt: first.writeKey!.createdAt, revokedAt: new Date(T0 + 60_000).toISOString() },
      { id: minted.writeKey!.id, createdAt: minted.writeKey!.createdAt },
    ]);
    assert.doesNotMatch(JSON.stringify(showSource(revoked.entry)), /[0-9a-f]{64}/, 'no digest shown');
  });

  it('keeps the last MAX_REVOKED_WRITE_KEYS revoked keys, dropping the one revoked first', () => {
    let shop = created('shop').entry;
    const revokedIds: string[] = [];
    for (let i = 0; i <= MAX_REVOKED_WRITE_KEYS; i++) {
      shop = expectWritten(mintWriteKey(withSources([shop]), on(shop), context)).entry;
      const keyId = shop.definition.writeKeys.find((k) => k.revokedAt === undefined)!.id;
      shop = expectWritten(revokeWriteKey(withSources([shop]), { ...on(shop, i * 1_000), keyId }, context)).entry;
      revokedIds.push(keyId);
    }
    const kept = shop.definition.writeKeys.filter((k) => k.revokedAt !== undefined).map((k) => k.id);
    assert.deepEqual(kept, revokedIds.slice(1));
    assert.equal(shop.definition.writeKeys.filter((k) => k.revokedAt === undefined).length, 1);
    assert.equal(
      parseRecord(expectWritten(renameSource(withSources([shop]), { ...on(shop), name: 'n' }, context)).record, keyring)
        .kind,
      'source',
    );
  });

  it('delete: refused while a runtime destination names the source; then a deletion record one version on', () => {
    const shop = created('shop').entry;
    const sources = withSources([shop]);
    const crm = expectDestination(
      createDestination(sources, { ...by, definition: { ...definition('crm'), sourceIds: ['shop'] } }, context),
    );
    const catalog = withSources([shop], catalogOf(crm, entry('other')));
    assert.deepEqual(deleteSource(catalog, on(shop), context), {
      kind: 'source_in_use',
      id: 'shop',
      destinationIds: ['crm'],
    });
    const deleted = deleteSource(sources, on(shop, 5_000), context);
    assert.equal(deleted.kind, 'deleted');
    assert.ok(deleted.kind === 'deleted');
    assert.equal(deleted.version, 2);
    assert.match(deleted.record.key, /^source:shop@/);
    const parsed = parseRecord(deleted.record, keyring);
    assert.deepEqual(parsed, {
      kind: 'deleted',
      key: deleted.record.key,
      mark: {
        id: 'shop',
        version: 2,
        updatedAt: new Date(T0 + 5_000).toISOString(),
        updatedBy: 'alice',
        tenant: 'default',
      },
    });
    assert.deepEqual(deleteSource(sources, { ...on(shop), id: 'web' }, context), {
      kind: 'file_declared',
      id: 'web',
      file: '/etc/sluice/config.yaml',
    });
  });
});

function expectDestination(outcome: ReturnType<typeof createDestination>) {
  assert.equal(outcome.kind, 'created', JSON.stringify(outcome));
  assert.ok(outcome.kind === 'created');
  return outcome.entry;
}

describe('runtime sources: the sources in force', () => {
  it('a runtime destination may name a runtime source; without it the config refuses the id', () => {
    const shop = created('shop').entry;
    const named = { ...definition('crm'), sourceIds: ['web', 'shop'] };
    assert.equal(createDestination(withSources([shop]), { ...by, definition: named }, context).kind, 'created');
    assert.deepEqual(createDestination(emptyCatalog(), { ...by, definition: named }, context), {
      kind: 'invalid',
      field: 'sourceIds[1]',
      problem: 'unknown source "shop"',
    });
  });

  it('merge: the file’s sources first, then the runtime ones by id; an id the file declares is the file’s', () => {
    const zeta = created('zeta').entry;
    const alpha = created('alpha', 'Alpha').entry;
    // Created before the file declared the id.
    const clash = { ...zeta, id: 'web', definition: { ...zeta.definition, id: 'web' } };
    const catalog = withSources([zeta, alpha, clash]);
    const { sources, ignored } = mergeSources(context.file, catalog);
    assert.deepEqual(
      sources.map((s) => s.id),
      ['web', 'app', 'alpha', 'zeta'],
    );
    assert.equal(sources[0], context.file.config.sources[0], 'the file’s own objects');
    assert.deepEqual(sources[0]!.writeKeys, ['k1']);
    assert.deepEqual(ignored, [{ id: 'web', reason: 'file_declared', file: '/etc/sluice/config.yaml' }]);
    assert.equal(mergeSources(context.file, emptyCatalog()).sources, context.file.config.sources);
    // A runtime destination naming a runtime source is in force; once the source is gone, it is ignored.
    const crm = { ...entry('crm'), definition: { ...definition('crm'), sourceIds: ['alpha'] } };
    assert.deepEqual(
      mergeDestinations(context.file, withSources([alpha], catalogOf(crm))).destinations.map((d) => d.id),
      ['orders', 'crm'],
    );
    assert.deepEqual(mergeDestinations(context.file, catalogOf(crm)).ignored, [
      { id: 'crm', reason: 'invalid', field: 'sourceIds[0]', problem: 'unknown source "alpha"' },
    ]);
  });
});
