import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig, validateSource } from '@sluice/config';

/** The field and problem the file reports for `sources[0]`, and what `validateSource` reports for the source alone. */
function bothWays(source: Record<string, unknown>): [string, string] {
  let fromFile = '';
  try {
    parseConfig({ sources: [{ writeKeys: ['k'], ...source }] }, {});
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    fromFile = `${err.field.replace(/^sources\[0\]\./, '')}: ${err.problem}`;
  }
  try {
    validateSource(source);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return [fromFile, `${err.field}: ${err.problem}`];
  }
  return [fromFile, ''];
}

describe('validateSource: a source’s id and name by the file’s rules', () => {
  it('gives the id, the name and the tenant, defaulting to empty and `default` as in the file', () => {
    assert.deepEqual(validateSource({ id: 'shop' }), { id: 'shop', name: '', tenant: 'default' });
    assert.deepEqual(validateSource({ id: 'shop.eu-1', name: 'Shop', tenant: 'acme' }), {
      id: 'shop.eu-1',
      name: 'Shop',
      tenant: 'acme',
    });
  });

  it('refuses what the file refuses, with the same message', () => {
    for (const source of [
      {},
      { id: '' },
      { id: 'a b' },
      { id: 'x'.repeat(201) },
      { id: 'x', name: 3 },
      { id: 'x', tenant: 'a b' },
    ]) {
      const [fromFile, alone] = bothWays(source);
      assert.notEqual(alone, '', JSON.stringify(source));
      assert.equal(alone, fromFile, JSON.stringify(source));
    }
  });

  it('takes no write keys or other field: a runtime source’s keys are minted', () => {
    assert.throws(() => validateSource({ id: 'x', writeKeys: ['k'] }), /writeKeys: is not a known setting/);
    assert.throws(() => validateSource({ id: 'x', rateLimit: { perSecond: 1 } }), /rateLimit: is not a known setting/);
    assert.throws(() => validateSource('x'), /must be object/);
  });
});
