import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import {
  type CatalogEntry,
  CatalogRecordError,
  clearingRecord,
  deletionRecord,
  MAX_RECORD_BYTES,
  parseRecord,
  type SourceEntry,
  serializeEntry,
  serializeSource,
} from '@sluice/destination-catalog';
import { DecryptionError, Keyring, UnknownKeyError } from '@sluice/secret-keyring';
import { definition, KEY_1, keyring } from './fixtures.ts';

const WHSEC = `whsec_${randomBytes(32).toString('base64')}`;
const entry: CatalogEntry = {
  id: 'billing',
  version: 3,
  updatedAt: '2026-11-01T00:00:00.000Z',
  updatedBy: 'alice',
  definition: definition('billing', {
    webhookUrl: 'https://user:pass@legacy.example/in?token=t0k',
    webhooks: [{ url: 'https://billing.example/in?key=abc', headers: { Authorization: 'Bearer s3cr3t-token' } }],
    sharedSecret: 'shared-secret-value',
    signing: {
      schemes: ['x-signature', 'standard-webhooks'],
      xSignature: { secrets: [{ secret: 'rotating-x-secret', notBefore: '2026-11-02T00:00:00Z' }] },
      standardWebhooks: { secrets: [{ secret: WHSEC }] },
    },
  }),
};
const PLAIN = [
  'user:pass',
  'token=t0k',
  'key=abc',
  's3cr3t-token',
  'shared-secret-value',
  'rotating-x-secret',
  WHSEC.slice(6, 30),
];
const SECRET_FIELDS = [
  'webhookUrl',
  'webhooks.0.url',
  'webhooks.0.headers.Authorization',
  'sharedSecret',
  'signing.xSignature.secrets.0.secret',
  'signing.standardWebhooks.secrets.0.secret',
];

/** The value at a dotted path below `settings` of a record's definition. */
function at(value: string, path: string): unknown {
  let node: unknown = (JSON.parse(value) as { definition: { settings: unknown } }).definition.settings;
  for (const part of path.split('.')) node = (node as Record<string, unknown>)[part];
  return node;
}

/** A record's value with its definition changed by `edit`. */
function edited(value: string, edit: (record: Record<string, unknown>) => void): string {
  const record = JSON.parse(value) as Record<string, unknown>;
  edit(record);
  return JSON.stringify(record);
}

const KEY = 'billing@0123456789abcdef';

function refused(value: string | null, key = KEY): CatalogRecordError {
  try {
    parseRecord({ key, value }, keyring);
  } catch (err) {
    assert.ok(err instanceof CatalogRecordError, String(err));
    return err;
  }
  assert.fail('parsed');
}

describe('catalog: the record', () => {
  const record = serializeEntry(entry, keyring);

  it('is keyed by the id and a new nonce, and holds the entry, every secret encrypted, none in clear', () => {
    assert.match(record.key, /^billing@[0-9a-f]{16}$/);
    assert.notEqual(serializeEntry(entry, keyring).key, record.key, 'every record its own key');
    const value = JSON.parse(record.value!) as Record<string, unknown>;
    assert.deepEqual(Object.keys(value).sort(), ['definition', 'format', 'id', 'updatedAt', 'updatedBy', 'version']);
    assert.equal(value.format, 1);
    for (const field of SECRET_FIELDS) {
      const secret = at(record.value!, field) as { encrypted: string };
      assert.deepEqual(Object.keys(secret), ['encrypted'], field);
      assert.match(secret.encrypted, /^v1\.k1\./);
    }
    for (const plain of PLAIN) assert.ok(!record.value!.includes(plain), `${plain} in the record`);
    assert.equal(at(record.value!, 'signing.xSignature.secrets.0.notBefore'), '2026-11-02T00:00:00Z');
  });

  it('reads back to the same entry (a Buffer too)', () => {
    assert.deepEqual(parseRecord(record, keyring), { kind: 'entry', key: record.key, entry });
    assert.deepEqual(parseRecord({ key: Buffer.from(record.key), value: Buffer.from(record.value!) }, keyring), {
      kind: 'entry',
      key: record.key,
      entry,
    });
  });

  it('a deletion carries its version; a null value clears one key', () => {
    const mark = { id: 'billing', version: 4, updatedAt: '2026-11-01T01:00:00.000Z', updatedBy: 'bob' };
    const deletion = deletionRecord(mark, 'destination');
    assert.match(deletion.key, /^billing@[0-9a-f]{16}$/);
    assert.deepEqual(JSON.parse(deletion.value!), { format: 1, ...mark, deleted: true });
    assert.deepEqual(parseRecord(deletion, keyring), { kind: 'deleted', key: deletion.key, mark });
    assert.deepEqual(clearingRecord(record.key), { key: record.key, value: null });
    assert.deepEqual(parseRecord(clearingRecord(record.key), keyring), {
      kind: 'cleared',
      key: record.key,
      id: 'billing',
    });
    assert.match(refused(edited(deletion.value!, (r) => (r.definition = {}))).message, /a deletion has no definition/);
    assert.match(refused(edited(record.value!, (r) => (r.deleted = false))).message, /deleted must be true/);
  });

  it('a deletion names the tenant of what it deleted; only a deletion names one, and only a tenant id', () => {
    const mark = { id: 'billing', version: 4, tenant: 'acme', updatedAt: '2026-11-01T01:00:00.000Z', updatedBy: 'bob' };
    const deletion = deletionRecord(mark, 'destination');
    assert.equal(JSON.parse(deletion.value!).tenant, 'acme');
    assert.deepEqual(parseRecord(deletion, keyring), { kind: 'deleted', key: deletion.key, mark });
    for (const tenant of ['', 'a b', 7, 'x'.repeat(101)])
      assert.match(refused(edited(deletion.value!, (r) => (r.tenant = tenant))).message, /tenant must be 1–100/);
    assert.match(
      refused(edited(record.value!, (r) => (r.tenant = 'acme'))).message,
      /only a deletion has a tenant beside its definition/,
    );
  });

  it('refuses a key not of the form <id>@<nonce>, and a value over the limit unread', () => {
    for (const key of ['billing', '@abc', 'billing@'])
      assert.match(refused(record.value, key).message, /the key is not <id>@<nonce>/);
    assert.match(refused(null, 'billing').message, /the key is not/);
    const large = `${' '.repeat(MAX_RECORD_BYTES)}{}`;
    assert.match(refused(large).message, new RegExp(`value of ${MAX_RECORD_BYTES + 2} bytes passes the limit`));
  });

  it('reads what an older key wrote after a new key is prepended; new writes use the new key', () => {
    const rotated = new Keyring([
      { id: 'k2', key: randomBytes(32) },
      { id: 'k1', key: KEY_1 },
    ]);
    assert.deepEqual(parseRecord(record, rotated), { kind: 'entry', key: record.key, entry });
    const rewritten = serializeEntry(entry, rotated);
    for (const field of SECRET_FIELDS)
      assert.match((at(rewritten.value!, field) as { encrypted: string }).encrypted, /^v1\.k2\./);
    assert.deepEqual(parseRecord(rewritten, rotated), { kind: 'entry', key: rewritten.key, entry });
    assert.throws(
      () => parseRecord(rewritten, keyring),
      (err) => err instanceof CatalogRecordError && err.cause instanceof UnknownKeyError && /"k2"/.test(err.message),
    );
  });

  it('a secret moved to another field or another record does not decrypt', () => {
    const header = at(record.value!, 'webhooks.0.headers.Authorization');
    const moved = edited(record.value!, (r) => {
      (r.definition as { settings: Record<string, unknown> }).settings.sharedSecret = header;
    });
    const err = refused(moved);
    assert.match(err.message, /definition\.settings\.sharedSecret: ciphertext under key "k1" does not authenticate/);
    assert.ok(err.cause instanceof DecryptionError);
    const other = serializeEntry({ ...entry, id: 'other', definition: { ...entry.definition, id: 'other' } }, keyring);
    const swapped = edited(record.value!, (r) => {
      (r.definition as { settings: Record<string, unknown> }).settings.sharedSecret = at(other.value!, 'sharedSecret');
    });
    assert.ok(refused(swapped).cause instanceof DecryptionError);
  });

  it('refuses a plain or referenced secret, another format, a mismatched id, a bad version or author', () => {
    const plain = edited(record.value!, (r) => {
      (r.definition as { settings: Record<string, unknown> }).settings.sharedSecret = 'in clear';
    });
    assert.match(refused(plain).message, /definition\.settings\.sharedSecret: a secret must be stored encrypted/);
    assert.ok(!refused(plain).message.includes('in clear'));
    const referenced = edited(record.value!, (r) => {
      (r.definition as { settings: Record<string, unknown> }).settings.sharedSecret = { env: 'KAFKA_PASSWORD' };
    });
    assert.match(refused(referenced).message, /stored encrypted/);
    assert.match(refused(edited(record.value!, (r) => (r.format = 2))).message, /format 2, expected 1/);
    assert.match(refused(record.value, 'other@0123456789abcdef').message, /id differs from the record key/);
    assert.match(refused(edited(record.value!, (r) => (r.version = 0))).message, /version/);
    assert.match(refused(edited(record.value!, (r) => (r.updatedBy = ''))).message, /updatedBy/);
    assert.match(refused(edited(record.value!, (r) => (r.updatedAt = 'yesterday'))).message, /updatedAt/);
    assert.match(refused('{').message, /not JSON/);
    assert.match(refused('[]').message, /not a JSON object/);
    assert.throws(() => parseRecord({ key: null, value: record.value }, keyring), CatalogRecordError);
  });

  it("refuses a definition the config's rules refuse, naming the field", () => {
    const invalid = edited(record.value!, (r) => {
      (r.definition as Record<string, unknown>).ordering = 'sometimes';
    });
    assert.match(refused(invalid).message, /^catalog record "billing@0123456789abcdef": definition\.ordering: /);
    const renamed = edited(record.value!, (r) => {
      (r.definition as Record<string, unknown>).id = 'other';
    });
    assert.match(refused(renamed).message, /definition\.id differs from the record key/);
  });
});

describe('catalog: a source’s record', () => {
  const digest = 'ab'.repeat(32);
  const source: SourceEntry = {
    id: 'shop',
    version: 2,
    updatedAt: '2026-11-01T00:00:00.000Z',
    updatedBy: 'alice',
    definition: {
      id: 'shop',
      name: 'Shop',
      tenant: 'default',
      writeKeys: [
        { id: 'wk_000000000001', hash: digest, createdAt: '2026-11-01T00:00:00.000Z' },
        {
          id: 'wk_000000000002',
          hash: 'cd'.repeat(32),
          createdAt: '2026-11-01T00:00:00.000Z',
          revokedAt: '2026-11-02T00:00:00.000Z',
        },
      ],
    },
  };
  const record = serializeSource(source);
  const SOURCE_KEY = 'source:shop@0123456789abcdef';
  const keyAt = (r: Record<string, unknown>) =>
    (r.definition as { writeKeys: Record<string, unknown>[] }).writeKeys[0]!;

  it('is keyed source:<id>@<nonce> and reads back to the same source; a destination may share its id', () => {
    assert.match(record.key, /^source:shop@[0-9a-f]{16}$/);
    assert.deepEqual(parseRecord(record, keyring), { kind: 'source', key: record.key, entry: source });
    const deletion = deletionRecord({ ...source, version: 3 }, 'source');
    assert.match(deletion.key, /^source:shop@/);
    assert.equal(parseRecord(deletion, keyring).kind, 'deleted');
    assert.deepEqual(parseRecord(clearingRecord(SOURCE_KEY), keyring), {
      kind: 'cleared',
      key: SOURCE_KEY,
      id: 'shop',
    });
    assert.throws(() => parseRecord({ key: 'source:@0123456789abcdef', value: null }, keyring), /the key is not/);
  });

  it('refuses a key in clear, a malformed digest or id, two keys alike, an id or name the file would refuse', () => {
    const bad = (edit: (r: Record<string, unknown>) => void) =>
      refused(edited(record.value!, edit), SOURCE_KEY).message;
    assert.match(
      bad((r) => (keyAt(r).key = 'sk_in-clear')),
      /definition\.writeKeys\[0\]\.key is not a field of a stored write key/,
    );
    assert.ok(!bad((r) => (keyAt(r).key = 'sk_in-clear')).includes('sk_in-clear'));
    assert.match(
      bad((r) => (keyAt(r).hash = 'sk_in-clear')),
      /writeKeys\[0\]\.hash must be a SHA-256 digest/,
    );
    assert.match(
      bad((r) => (keyAt(r).id = 'a b')),
      /writeKeys\[0\]\.id must be/,
    );
    assert.match(
      bad((r) => (keyAt(r).revokedAt = 'later')),
      /writeKeys\[0\]\.revokedAt/,
    );
    assert.match(
      bad((r) => ((r.definition as { writeKeys: unknown[] }).writeKeys[1] = keyAt(r))),
      /two keys share an id or a digest/,
    );
    assert.match(
      bad((r) => ((r.definition as Record<string, unknown>).name = 3)),
      /definition\.name: must be string/,
    );
    assert.match(
      bad((r) => ((r.definition as Record<string, unknown>).writeKeys = 'k')),
      /must be a list/,
    );
    assert.match(refused(record.value, 'source:other@0123456789abcdef').message, /id differs from the record key/);
  });
});
