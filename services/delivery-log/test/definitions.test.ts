import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  changedFields,
  type DefinitionItem,
  definitionUrls,
  etagOf,
  expectedVersion,
  pageDefinitions,
  parseDefinitionsQuery,
} from '../src/domain/definitions.ts';
import { parseChangesQuery } from '../src/domain/audit.ts';

const fileItem = (id: string, sourceIds: string[] = []): DefinitionItem => ({
  origin: 'file',
  id,
  tenant: 'default',
  sourceIds,
  file: '/etc/sluice.yaml',
});
const query = (q: string) => {
  const parsed = parseDefinitionsQuery(new URLSearchParams(q));
  assert.ok(parsed.ok, JSON.stringify(parsed));
  return parsed.value;
};

describe('definitions: If-Match and ETag', () => {
  it('reads the version an ETag of this API names, quoted or bare', () => {
    assert.equal(etagOf(3), '"3"');
    assert.deepEqual(expectedVersion('"3"'), { ok: true, value: 3 });
    assert.deepEqual(expectedVersion(' 12 '), { ok: true, value: 12 });
  });

  it('tells a missing header (428) from one naming no single version (400 on If-Match)', () => {
    assert.equal(expectedVersion(undefined), undefined);
    for (const header of ['*', 'W/"3"', '"3", "4"', '"x"', '"3']) {
      const checked = expectedVersion(header);
      assert.equal(checked?.ok === false && checked.field, 'If-Match', header);
    }
  });
});

describe('definitions: list query and pages', () => {
  const items = [fileItem('c', ['web']), fileItem('a', ['app']), fileItem('b'), fileItem('d', ['web'])];

  it('pages by id with a cursor, to the end', () => {
    const first = pageDefinitions(items, query('limit=2'));
    assert.deepEqual(
      first.definitions.map((d) => d.id),
      ['a', 'b'],
    );
    assert.ok(first.nextCursor);
    const second = pageDefinitions(items, query(`limit=2&cursor=${first.nextCursor}`));
    assert.deepEqual(
      second.definitions.map((d) => d.id),
      ['c', 'd'],
    );
    assert.equal(second.nextCursor, null);
  });

  it('filters by source: a destination with no sourceIds takes every source', () => {
    const web = pageDefinitions(items, query('sourceId=web'));
    assert.deepEqual(
      web.definitions.map((d) => d.id),
      ['b', 'c', 'd'],
    );
  });

  it('refuses a cursor it did not give and a limit out of range, naming the field', () => {
    for (const [q, field] of [
      ['cursor=%%%', 'cursor'],
      ['cursor=', 'cursor'],
      ['limit=0', 'limit'],
      ['limit=501', 'limit'],
    ]) {
      const parsed = parseDefinitionsQuery(new URLSearchParams(q));
      assert.equal(parsed.ok === false && parsed.field, field, q);
    }
  });
});

describe('definitions: URLs to judge', () => {
  it('finds webhookUrl and each endpoint url, with their fields, in a definition or a patch', () => {
    assert.deepEqual(
      definitionUrls({ settings: { webhookUrl: 'http://a/', webhooks: [{ url: 'http://b/' }, { weight: 1 }] } }),
      [
        { field: 'settings.webhookUrl', url: 'http://a/' },
        { field: 'settings.webhooks[0].url', url: 'http://b/' },
      ],
    );
    assert.deepEqual(definitionUrls({ enabled: false }), []);
    assert.deepEqual(definitionUrls('nope'), []);
  });
});

describe('definitions: the audit', () => {
  it('names the fields a change set, by path, never their values', () => {
    const before = { id: 'a', settings: { webhooks: [{ url: 'https://a/', headers: { x: '1' } }] } };
    const after = {
      id: 'a',
      enabled: false,
      settings: { webhooks: [{ url: 'https://b/', headers: { x: '1' } }, { url: 'https://c/' }] },
    };
    assert.deepEqual(changedFields(before, after), ['enabled', 'settings.webhooks[0].url', 'settings.webhooks[1].url']);
    assert.deepEqual(changedFields(before, structuredClone(before)), []);
    assert.deepEqual(changedFields({}, { id: 'a', settings: { webhookUrl: 'x' } }), ['id', 'settings.webhookUrl']);
  });

  it('reads its query: destinationId, limit 1–1,000', () => {
    assert.deepEqual(parseChangesQuery(new URLSearchParams('destinationId=a'), 'destinationId'), {
      ok: true,
      value: { limit: 50, subjectId: 'a' },
    });
    assert.deepEqual(parseChangesQuery(new URLSearchParams('sourceId=s'), 'sourceId'), {
      ok: true,
      value: { limit: 50, subjectId: 's' },
    });
    const refused = parseChangesQuery(new URLSearchParams('limit=1001'), 'destinationId');
    assert.equal(refused.ok === false && refused.field, 'limit');
  });
});
