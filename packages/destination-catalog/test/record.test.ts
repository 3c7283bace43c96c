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
  serializeEntry,
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
    const deletion = deletionRecord(mark);
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
