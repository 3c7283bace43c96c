import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateDestination } from '@sluice/config';
import {
  type CatalogEntry,
  type CatalogOutcome,
  createDestination,
  deleteDestination,
  emptyCatalog,
  MAX_RECORD_BYTES,
  OUTCOME_STATUS,
  patchDestination,
  parseRecord,
  replaceDestination,
  type RotateRequest,
  rotateSecret,
  type Written,
} from '@sluice/destination-catalog';
import { webhookSecretKey } from '@sluice/webhook-signature';
import { catalogOf, context, definition, T0 } from './fixtures.ts';

const by = { by: 'alice', at: T0 };

function expectWritten(outcome: CatalogOutcome): Written {
  assert.ok(
    outcome.kind === 'created' || outcome.kind === 'updated' || outcome.kind === 'rotated',
    JSON.stringify(outcome),
  );
  return outcome;
}

/** A catalog holding what `outcome` wrote. */
const created = (id: string, settings: Record<string, unknown> = {}) =>
  expectWritten(createDestination(emptyCatalog(), { ...by, definition: definition(id, settings) }, context));

describe('catalog: create', () => {
  it('takes a free id at version 1, generating an X-Signature secret by default, returned once', () => {
    const outcome = created('billing');
    assert.equal(outcome.kind, 'created');
    assert.equal(OUTCOME_STATUS[outcome.kind], 201);
    assert.equal(outcome.entry.version, 1);
    assert.equal(outcome.entry.updatedAt, '2026-11-01T00:00:00.000Z');
    assert.equal(outcome.entry.updatedBy, 'alice');
    assert.equal(outcome.secrets.length, 1);
    const [secret] = outcome.secrets;
    assert.equal(secret!.scheme, 'x-signature');
    assert.equal(secret!.field, 'settings.signing.xSignature.secrets[0].secret');
    assert.match(secret!.secret, /^[0-9a-f]{64}$/);
    assert.ok(!outcome.record.value!.includes(secret!.secret), 'the record holds it encrypted');
    const resolved = validateDestination(outcome.entry.definition).destination;
    assert.deepEqual(resolved.signing.xSignatureKeys, [{ secret: secret!.secret }]);
  });

  it('generates a whsec_ secret for standard-webhooks, and none for a scheme given its secret', () => {
    const outcome = created('billing', {
      sharedSecret: 'given',
      signing: { schemes: ['x-signature', 'standard-webhooks'] },
    });
    assert.deepEqual(
      outcome.secrets.map((s) => [s.scheme, s.field]),
      [['standard-webhooks', 'settings.signing.standardWebhooks.secrets[0].secret']],
    );
    assert.equal(webhookSecretKey(outcome.secrets[0]!.secret).length, 32);
  });

  it('refuses an id the file declares (409, naming the file) or the catalog has (409)', () => {
    const fromFile = createDestination(emptyCatalog(), { ...by, definition: definition('orders') }, context);
    assert.deepEqual(fromFile, { kind: 'file_declared', id: 'orders', file: '/etc/sluice/config.yaml' });
    assert.equal(OUTCOME_STATUS[fromFile.kind], 409);
    const first = created('billing');
    const again = createDestination(catalogOf(first.entry), { ...by, definition: definition('billing') }, context);
    assert.deepEqual(again, { kind: 'id_taken', id: 'billing', version: 1 });
  });

  it('goes on from the version a deleted destination of the id reached', () => {
    const again = createDestination(
      emptyCatalog(),
      { ...by, definition: definition('billing'), deleted: { version: 4 } },
      context,
    );
    assert.equal(expectWritten(again).entry.version, 5);
  });

  it('never hands an id to another tenant: one in force there, or deleted there, is refused without telling of it', () => {
    const acme = created('billing', {}).entry;
    const inAcme = { ...acme, definition: { ...acme.definition, tenant: 'acme' } };
    const inGlobex = { ...definition('billing'), tenant: 'globex' };
    const taken = createDestination(catalogOf(inAcme), { ...by, definition: inGlobex }, context);
    assert.deepEqual(taken, { kind: 'id_reserved', id: 'billing' });
    assert.equal(OUTCOME_STATUS[taken.kind], 409);
    const gone = deleteDestination(catalogOf(inAcme), { ...by, id: 'billing', expectedVersion: 1 }, context);
    assert.ok(gone.kind === 'deleted', JSON.stringify(gone));
    const read = parseRecord(gone.record, context.keyring);
    assert.ok(read.kind === 'deleted' && read.mark.tenant === 'acme', 'the deletion names the tenant it deleted from');
    const deleted = { version: 2, tenant: 'acme' };
    assert.deepEqual(createDestination(emptyCatalog(), { ...by, definition: inGlobex, deleted }, context), {
      kind: 'id_reserved',
      id: 'billing',
    });
    const withoutTenant = definition('billing');
    assert.deepEqual(
      createDestination(emptyCatalog(), { ...by, definition: withoutTenant, deleted }, context),
      { kind: 'id_reserved', id: 'billing' },
      'a definition naming no tenant is in the default tenant',
    );
  });

  it('gives a deleted id back to its own tenant, and to anyone when its deletion names no tenant', () => {
    const back = createDestination(
      emptyCatalog(),
      { ...by, definition: definition('billing'), deleted: { version: 2, tenant: 'default' } },
      context,
    );
    assert.equal(expectWritten(back).entry.version, 3);
    const unnamed = createDestination(
      emptyCatalog(),
      { ...by, definition: { ...definition('billing'), tenant: 'globex' }, deleted: { version: 2 } },
      context,
    );
    // Refused only by the config's rules (the fixture's source is the default tenant's), not by the id.
    assert.equal(unnamed.kind, 'invalid', JSON.stringify(unnamed));
  });

  it("refuses what the config refuses, with the config's field and message", () => {
    const six = Array.from({ length: 6 }, (_, i) => ({ url: `https://h${i}.example/` }));
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [definition('b', { webhooks: six }), 'settings.webhooks', /at most 5 endpoints/],
      [{ ...definition('b'), sourceIds: ['nope'] }, 'sourceIds[0]', /unknown source "nope"/],
      [definition('b', { sharedSecret: { env: 'KAFKA_PASSWORD' } }), 'settings.sharedSecret', /the secret itself/],
      [definition('b', { webhooks: [{ url: 'ftp://x.example/' }] }), 'settings.webhooks[0].url', /http or https/],
      [{ ...definition('b'), bogus: 1 }, 'bogus', /not a known setting/],
    ];
    for (const [input, field, problem] of cases) {
      const outcome = createDestination(emptyCatalog(), { ...by, definition: input }, context);
      assert.equal(outcome.kind, 'invalid', JSON.stringify(input));
      assert.equal(OUTCOME_STATUS[outcome.kind], 400);
      if (outcome.kind === 'invalid') {
        assert.equal(outcome.field, field);
        assert.match(outcome.problem, problem);
      }
    }
    assert.equal(createDestination(emptyCatalog(), { ...by, definition: 'nope' }, context).kind, 'invalid');
    const dotted = catalogOf(created('bill.ing').entry);
    const clash = createDestination(dotted, { ...by, definition: definition('bill_ing') }, context);
    assert.equal(clash.kind === 'invalid' && clash.field, 'id');
    assert.match(clash.kind === 'invalid' ? clash.problem : '', /"bill_ing" and destination "bill\.ing" would name/);
    const noId = createDestination(emptyCatalog(), { ...by, definition: { type: 'webhooks' } }, context);
    assert.deepEqual(noId, { kind: 'invalid', field: 'id', problem: 'is required' });
    const nobody = createDestination(emptyCatalog(), { by: '', at: T0, definition: definition('b') }, context);
    assert.equal(nobody.kind === 'invalid' && nobody.field, 'updatedBy');
  });

  it(`refuses a definition whose record would pass ${MAX_RECORD_BYTES} bytes (413)`, () => {
    const headers = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`X-H${i}`, 'v'.repeat(700)]));
    const webhooks = Array.from({ length: 5 }, (_, i) => ({ url: `https://h${i}.example/`, headers }));
    const outcome = createDestination(emptyCatalog(), { ...by, definition: definition('big', { webhooks }) }, context);
    assert.equal(outcome.kind, 'too_large');
    assert.equal(OUTCOME_STATUS[outcome.kind], 413);
    if (outcome.kind === 'too_large') assert.ok(outcome.bytes > outcome.limit && outcome.limit === MAX_RECORD_BYTES);
  });

  it('does not change the definition it is given', () => {
    const input = definition('billing');
    const copy = structuredClone(input);
    created('billing');
    createDestination(emptyCatalog(), { ...by, definition: input }, context);
    assert.deepEqual(input, copy);
  });
});

describe('catalog: replace, patch and delete at an expected version', () => {
  const first = created('billing');
  const catalog = catalogOf(first.entry);
  const later = { by: 'bob', at: T0 + 60_000 };

  it('replace: a stale version is a version_conflict (412), an unknown id not_found, a file id file_declared', () => {
    const next = definition('billing', { webhooks: [{ url: 'https://new.example/' }] });
    const stale = replaceDestination(
      catalog,
      { ...later, id: 'billing', expectedVersion: 2, definition: next },
      context,
    );
    assert.deepEqual(stale, { kind: 'version_conflict', id: 'billing', expectedVersion: 2, currentVersion: 1 });
    assert.equal(OUTCOME_STATUS[stale.kind], 412);
    const missing = replaceDestination(
      catalog,
      { ...later, id: 'nope', expectedVersion: 1, definition: next },
      context,
    );
    assert.deepEqual(missing, { kind: 'not_found', id: 'nope' });
    const fileId = replaceDestination(
      catalog,
      { ...later, id: 'orders', expectedVersion: 1, definition: next },
      context,
    );
    assert.equal(fileId.kind, 'file_declared');
  });

  it('replace: the new definition at version 2, keeping the signing secrets it leaves out', () => {
    const next = definition('billing', { webhooks: [{ url: 'https://new.example/' }] });
    const outcome = expectWritten(
      replaceDestination(catalog, { ...later, id: 'billing', expectedVersion: 1, definition: next }, context),
    );
    assert.equal(outcome.kind, 'updated');
    assert.equal(outcome.entry.version, 2);
    assert.equal(outcome.entry.updatedBy, 'bob');
    assert.deepEqual(outcome.secrets, [], 'no new secret');
    const resolved = validateDestination(outcome.entry.definition).destination;
    assert.equal(resolved.endpoints[0]!.url, 'https://new.example/');
    assert.equal(resolved.signing.xSignatureKeys[0]!.secret, first.secrets[0]!.secret);
  });

  it('replace: refuses another id in the definition', () => {
    const outcome = replaceDestination(
      catalog,
      { ...later, id: 'billing', expectedVersion: 1, definition: definition('other') },
      context,
    );
    assert.equal(outcome.kind === 'invalid' && outcome.field, 'id');
  });

  it('patch: merges (RFC 7386), null removes, and the result is validated', () => {
    const patch = { enabled: false, settings: { webhooks: [{ url: 'https://p.example/', headers: { 'X-T': '1' } }] } };
    const outcome = expectWritten(
      patchDestination(catalog, { ...later, id: 'billing', expectedVersion: 1, patch }, context),
    );
    const d = outcome.entry.definition as { enabled: boolean; settings: { signing: unknown } };
    assert.equal(d.enabled, false);
    assert.ok(d.settings.signing, 'signing kept');
    const removed = patchDestination(
      catalog,
      { ...later, id: 'billing', expectedVersion: 1, patch: { settings: null } },
      context,
    );
    assert.equal(removed.kind === 'invalid' && removed.field, 'settings.webhooks');
    const six = Array.from({ length: 6 }, (_, i) => ({ url: `https://h${i}.example/` }));
    const tooMany = patchDestination(
      catalog,
      { ...later, id: 'billing', expectedVersion: 1, patch: { settings: { webhooks: six } } },
      context,
    );
    assert.equal(tooMany.kind === 'invalid' && tooMany.field, 'settings.webhooks');
    const stale = patchDestination(catalog, { ...later, id: 'billing', expectedVersion: 0, patch: {} }, context);
    assert.equal(stale.kind, 'version_conflict');
  });

  it('delete: a deletion one version on from the expected one; stale and file ids refused', () => {
    const outcome = deleteDestination(catalog, { ...later, id: 'billing', expectedVersion: 1 }, context);
    assert.ok(outcome.kind === 'deleted', JSON.stringify(outcome));
    assert.equal(outcome.version, 2);
    const mark = {
      id: 'billing',
      version: 2,
      updatedAt: new Date(later.at).toISOString(),
      updatedBy: later.by,
      tenant: 'default',
    };
    assert.deepEqual(parseRecord(outcome.record, context.keyring), { kind: 'deleted', key: outcome.record.key, mark });
    assert.deepEqual(deleteDestination(catalog, { ...later, by: '', id: 'billing', expectedVersion: 1 }, context), {
      kind: 'invalid',
      field: 'updatedBy',
      problem: 'must be 1–200 characters',
    });
    assert.equal(
      deleteDestination(catalog, { ...later, id: 'billing', expectedVersion: 3 }, context).kind,
      'version_conflict',
    );
    assert.equal(
      deleteDestination(catalog, { ...later, id: 'orders', expectedVersion: 1 }, context).kind,
      'file_declared',
    );
  });
});

describe('catalog: rotate a signing secret', () => {
  const at = T0 + 3_600_000;
  const overlapMs = 2 * 3_600_000;
  /** Rotates `scheme` of the catalog holding `entry`, at its version. */
  const rotated = (entry: CatalogEntry, request: Pick<RotateRequest, 'scheme' | 'overlapMs'> & { at?: number }) =>
    expectWritten(
      rotateSecret(
        catalogOf(entry),
        { by: 'ops', at, id: entry.id, expectedVersion: entry.version, ...request },
        context,
      ),
    );

  it('Standard Webhooks: the new secret signs at once, the old one beside it until the overlap ends', () => {
    const first = created('billing', { signing: { schemes: ['standard-webhooks'] } });
    const old = first.secrets[0]!.secret;
    const outcome = rotated(first.entry, { scheme: 'standard-webhooks', overlapMs });
    assert.equal(outcome.kind, 'rotated');
    assert.equal(outcome.entry.version, 2);
    const [fresh] = outcome.secrets;
    assert.equal(fresh!.field, 'settings.signing.standardWebhooks.secrets[1].secret');
    const keys = validateDestination(outcome.entry.definition).destination.signing.standardWebhooksKeys;
    assert.deepEqual(keys, [{ secret: old, notAfter: at + overlapMs }, { secret: fresh!.secret }]);
    assert.ok(!outcome.record.value!.includes(fresh!.secret));
  });

  it('X-Signature: sharedSecret moves into the set until the overlap ends, when the new one takes over', () => {
    const first = created('billing', { sharedSecret: 'legacy' });
    const outcome = rotated(first.entry, { scheme: 'x-signature', overlapMs });
    const signing = validateDestination(outcome.entry.definition).destination.signing;
    assert.deepEqual(signing.xSignatureKeys, [
      { secret: 'legacy', notAfter: at + overlapMs },
      { secret: outcome.secrets[0]!.secret, notBefore: at + overlapMs },
    ]);
    assert.equal((outcome.entry.definition.settings as Record<string, unknown>).sharedSecret, undefined);
  });

  it('a second rotation drops the expired secrets; the default overlap is 24 h', () => {
    const first = created('billing', { signing: { schemes: ['standard-webhooks'] } });
    const once = rotated(first.entry, { scheme: 'standard-webhooks', overlapMs });
    const later = at + overlapMs + 1;
    const twice = rotated(once.entry, { at: later, scheme: 'standard-webhooks' });
    const keys = validateDestination(twice.entry.definition).destination.signing.standardWebhooksKeys;
    assert.deepEqual(keys, [
      { secret: once.secrets[0]!.secret, notAfter: later + 24 * 3_600_000 },
      { secret: twice.secrets[0]!.secret },
    ]);
  });

  it('a second X-Signature rotation within the overlap drops the secret that would never have signed', () => {
    const once = rotated(created('billing', { sharedSecret: 'legacy' }).entry, { scheme: 'x-signature', overlapMs });
    const twice = rotated(once.entry, { scheme: 'x-signature', overlapMs: 60_000 });
    const signing = validateDestination(twice.entry.definition).destination.signing;
    assert.deepEqual(signing.xSignatureKeys, [
      { secret: 'legacy', notAfter: at + 60_000 },
      { secret: twice.secrets[0]!.secret, notBefore: at + 60_000 },
    ]);
  });

  it('refuses a scheme the destination does not sign with, a negative overlap, a stale version', () => {
    const first = created('billing');
    const catalog = catalogOf(first.entry);
    const request = { by: 'ops', at, id: 'billing', expectedVersion: 1 };
    const scheme = rotateSecret(catalog, { ...request, scheme: 'standard-webhooks' }, context);
    assert.equal(scheme.kind === 'invalid' && scheme.field, 'settings.signing.schemes');
    const negative = rotateSecret(catalog, { ...request, scheme: 'x-signature', overlapMs: -1 }, context);
    assert.equal(negative.kind === 'invalid' && negative.field, 'overlapMs');
    const stale = rotateSecret(catalog, { ...request, expectedVersion: 5, scheme: 'x-signature' }, context);
    assert.equal(stale.kind, 'version_conflict');
  });

  it('what a rotation writes reads back with both secrets', () => {
    const first = created('billing', { signing: { schemes: ['standard-webhooks'] } });
    const outcome = rotated(first.entry, { scheme: 'standard-webhooks' });
    const parsed = parseRecord(outcome.record, context.keyring);
    assert.deepEqual(parsed, { kind: 'entry', key: outcome.record.key, entry: outcome.entry });
  });
});
