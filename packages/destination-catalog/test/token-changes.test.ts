import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type Catalog,
  createToken,
  emptyCatalog,
  parseRecord,
  revokeToken,
  type TokenCreated,
  type TokenEntry,
  type TokenOutcome,
  tokenDigest,
} from '@sluice/destination-catalog';
import { applyRecord, emptyCatalogState } from '../src/catalog-state.ts';
import { keyring, T0 } from './fixtures.ts';

const by = { by: 'admin', at: T0 };

function expectCreated(outcome: TokenOutcome): TokenCreated {
  assert.equal(outcome.kind, 'created', JSON.stringify(outcome));
  return outcome as TokenCreated;
}

const withTokens = (tokens: TokenEntry[]): Catalog => ({
  ...emptyCatalog(),
  tokens: new Map(tokens.map((t) => [t.id, t])),
});

describe('tenant tokens in the catalog (docs/reference/tokens.md)', () => {
  it('creates a token shown once: the record keeps its SHA-256, read back as written', () => {
    const { entry, record, token } = expectCreated(
      createToken(emptyCatalog(), { ...by, token: { name: 'acme-ops', tenant: 'acme', role: 'manage' } }),
    );
    assert.match(token, /^slt_[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(token.slice(4), 'base64url').length, 32);
    assert.deepEqual(entry.definition, {
      id: entry.id,
      name: 'acme-ops',
      tenant: 'acme',
      role: 'manage',
      hash: tokenDigest(token),
      createdAt: new Date(T0).toISOString(),
    });
    assert.match(record.key, /^token:tok_[0-9a-f]{16}@[0-9a-f]{16}$/);
    assert.ok(!record.value!.includes(token) && !record.value!.includes(token.slice(4, 24)), 'never the token');
    assert.deepEqual(parseRecord(record, keyring), { kind: 'token', key: record.key, entry });
    const state = emptyCatalogState();
    assert.equal(applyRecord(state, parseRecord(record, keyring)), 'applied');
    assert.deepEqual(state.tokens.get(entry.id), entry);
  });

  it('refuses a wrong field by its name, a name in force, and an expiry not in the future', () => {
    const taken = expectCreated(
      createToken(emptyCatalog(), { ...by, token: { name: 'ops', tenant: 'acme', role: 'read' } }),
    ).entry;
    for (const [token, field] of [
      [undefined, '(root)'],
      [{ name: '', tenant: 'acme', role: 'read' }, 'name'],
      [{ name: 'x', tenant: 'a/b', role: 'read' }, 'tenant'],
      [{ name: 'x', tenant: 'acme', role: 'admin' }, 'role'],
      [{ name: 'x', tenant: 'acme', role: 'read', expiresAt: 'soon' }, 'expiresAt'],
      [{ name: 'x', tenant: 'acme', role: 'read', expiresAt: new Date(T0).toISOString() }, 'expiresAt'],
      [{ name: 'x', tenant: 'acme', role: 'read', hash: 'f'.repeat(64) }, 'hash'],
      [{ name: 'ops', tenant: 'globex', role: 'read' }, 'name'],
    ] as const) {
      const refused = createToken(withTokens([taken]), { ...by, token });
      assert.deepEqual([refused.kind, 'field' in refused && refused.field], ['invalid', field], JSON.stringify(token));
    }
  });

  it('revokes a token as a deletion one version on, and refuses an unknown id', () => {
    const { entry } = expectCreated(
      createToken(emptyCatalog(), { ...by, token: { name: 'ops', tenant: 'acme', role: 'read' } }),
    );
    const revoked = revokeToken(withTokens([entry]), { ...by, id: entry.id });
    assert.equal(revoked.kind, 'deleted');
    assert.equal('version' in revoked && revoked.version, 2);
    const state = emptyCatalogState();
    state.tokens.set(entry.id, entry);
    state.heads.set(`token:${entry.id}`, { version: 1, key: 'token:x@0' });
    assert.ok('record' in revoked);
    assert.equal(applyRecord(state, parseRecord(revoked.record, keyring)), 'applied');
    assert.equal(state.tokens.size, 0);
    assert.deepEqual(revokeToken(emptyCatalog(), { ...by, id: 'tok_0000000000000000' }), {
      kind: 'not_found',
      id: 'tok_0000000000000000',
    });
  });
});
