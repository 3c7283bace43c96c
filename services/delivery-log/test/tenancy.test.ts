import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tenantOfChange } from '../src/domain/tenancy.ts';

const admin = { role: 'admin', name: 'admin', tokenId: 'admin' } as const;
const acme = { role: 'manage', name: 'acme-ops', tokenId: 'tok_acme', tenant: 'acme' } as const;

describe('the tenant a change writes (docs/reference/tenants.md)', () => {
  it("gives the admin's create its choice, else default; a replace keeps the tenant it had; a patch leaves it", () => {
    assert.deepEqual(tenantOfChange(admin, { given: 'globex', form: 'whole' }), { ok: true, tenant: 'globex' });
    assert.deepEqual(tenantOfChange(admin, { given: undefined, form: 'whole' }), { ok: true, tenant: 'default' });
    assert.deepEqual(tenantOfChange(admin, { given: undefined, current: 'acme', form: 'whole' }), {
      ok: true,
      tenant: 'acme',
    });
    assert.deepEqual(tenantOfChange(admin, { given: undefined, current: 'acme', form: 'patch' }), {
      ok: true,
      tenant: undefined,
    });
  });

  it("writes a tenant token's changes in its own tenant, and refuses another one it names", () => {
    assert.deepEqual(tenantOfChange(acme, { given: undefined, form: 'whole' }), { ok: true, tenant: 'acme' });
    assert.deepEqual(tenantOfChange(acme, { given: 'acme', form: 'whole' }), { ok: true, tenant: 'acme' });
    assert.deepEqual(tenantOfChange(acme, { given: undefined, current: 'acme', form: 'patch' }), {
      ok: true,
      tenant: undefined,
    });
    for (const form of ['whole', 'patch'] as const) {
      const refused = tenantOfChange(acme, { given: 'globex', form });
      assert.equal(refused.ok, false);
    }
  });
});
