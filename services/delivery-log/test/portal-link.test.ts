import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Keyring } from '@sluice/secret-keyring';
import {
  checkLifetime,
  mintPortalLink,
  PORTAL_LINK_MAX_MS,
  type PortalGrant,
  readPortalLink,
} from '../src/domain/portal-link.ts';

const k1 = { id: 'k1', key: randomBytes(32) };
const k2 = { id: 'k2', key: randomBytes(32) };
let clock = 1_000_000;
const ctx = { keyring: new Keyring([k1]), now: () => clock };
const grant = (extra: Partial<PortalGrant> = {}): PortalGrant => ({
  tenant: 'acme',
  destinationId: 'crm',
  mintedBy: 'ops',
  id: 'abcdefabcdef',
  issuedAt: clock,
  expiresAt: clock + 60_000,
  ...extra,
});

describe('portal links', () => {
  it('reads back the grant it was minted with, until its expiry', () => {
    const token = mintPortalLink(ctx, grant());
    assert.match(token, /^spl1\.k1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.deepEqual(readPortalLink(ctx, token), { ok: true, grant: grant() });
    const later = { ...ctx, now: () => clock + 59_999 };
    assert.equal(readPortalLink(later, token).ok, true);
    const expired = { ...ctx, now: () => clock + 60_000 };
    assert.deepEqual(readPortalLink(expired, token), { ok: false, refusal: 'expired' });
  });

  it('refuses a token with any one character changed', () => {
    const token = mintPortalLink(ctx, grant());
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < token.length; i++) {
      if (token[i] === '.') continue;
      const other = alphabet[(alphabet.indexOf(token[i]!) + 1) % alphabet.length]!;
      const changed = token.slice(0, i) + other + token.slice(i + 1);
      const read = readPortalLink(ctx, changed);
      assert.equal(read.ok, false, `character ${i} changed: ${changed}`);
    }
  });

  it('after a rotation a link of the old key still opens while the ring holds it, and none once the key is dropped', () => {
    const token = mintPortalLink(ctx, grant());
    const rotated = { ...ctx, keyring: new Keyring([k2, k1]) };
    assert.equal(readPortalLink(rotated, token).ok, true);
    assert.match(mintPortalLink(rotated, grant()), /^spl1\.k2\./, 'new links signed with the new key');
    const dropped = { ...ctx, keyring: new Keyring([k2]) };
    assert.deepEqual(readPortalLink(dropped, token), { ok: false, refusal: 'bad_signature' });
  });

  it('refuses what is not a link, and a signed grant longer than 24 hours', () => {
    for (const token of ['', 'spl1', 'spl1.k1.e30', 'spl2.k1.e30.x', `spl1.k1.${'a'.repeat(3_000)}.x`, 'Bearer x'])
      assert.equal(readPortalLink(ctx, token).ok, false, token);
    const long = mintPortalLink(ctx, grant({ expiresAt: clock + PORTAL_LINK_MAX_MS + 1 }));
    assert.deepEqual(readPortalLink(ctx, long), { ok: false, refusal: 'bad_signature' });
    // A validly signed body that is not a grant.
    const body = Buffer.from('{"tenant":1}').toString('base64url');
    const { mac } = ctx.keyring.sign(`spl1.k1.${body}`, 'portal-link');
    assert.deepEqual(readPortalLink(ctx, `spl1.k1.${body}.${mac}`), { ok: false, refusal: 'malformed' });
    clock += 1;
  });

  it('a lifetime is from 1 s to 24 h', () => {
    assert.equal(checkLifetime(1_000), undefined);
    assert.equal(checkLifetime(PORTAL_LINK_MAX_MS), undefined);
    for (const ms of [0, 999, PORTAL_LINK_MAX_MS + 1, 1.5, Number.NaN]) assert.ok(checkLifetime(ms), String(ms));
  });
});
