import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeCursor } from '../src/domain/cursor.ts';
import { DEAD_REASONS } from '@sluice/envelope';
import { openApiDocument } from '../src/adapters/http/openapi.ts';
import { checkId, checkParams, checkTime, parseListQuery, parseReplayFilter } from '../src/domain/query.ts';

const list = (query: string) => parseListQuery(new URLSearchParams(query));
const refused = (result: { ok: boolean; field?: string }, field: string) => {
  assert.equal(result.ok, false);
  assert.equal(result.field, field);
};
const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('delivery-log API input (pure)', () => {
  it('reads ISO 8601 with its offset and epoch milliseconds, nothing else', () => {
    const accepted: [string, number][] = [
      ['2026-01-31T12:00:00Z', Date.UTC(2026, 0, 31, 12)],
      ['2026-01-31T12:00Z', Date.UTC(2026, 0, 31, 12)],
      ['2026-01-31T13:00:00.250+01:00', Date.UTC(2026, 0, 31, 12, 0, 0, 250)],
      ['2026-01-31T07:30:00-04:30', Date.UTC(2026, 0, 31, 12)],
      ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
      ['9999-12-31T23:59:59.999Z', Date.UTC(9999, 11, 31, 23, 59, 59, 999)],
      ['1700000000000', 1_700_000_000_000],
      ['0', 0],
    ];
    for (const [text, ms] of accepted) assert.deepEqual(checkTime('since', text), { ok: true, value: ms }, text);
    for (const text of [
      "' OR 1=1",
      '1 2 3',
      'Jan 1 2020',
      '2026-01-31',
      '2026-01-31T12:00:00',
      '2026-02-30T00:00:00Z',
      '2026-01-31T24:00:00Z',
      '2026-01-31T12:60:00Z',
      '2026-01-31T12:00:00+25:00',
      '2026-01-31 12:00:00Z',
      '+010000-01-01T00:00:00Z',
      '10000-01-01T00:00:00Z',
      '253402300800000',
      '1e12',
      '-1',
      '1.5',
      '',
    ])
      refused(checkTime('since', text), 'since');
  });

  it("refuses `since=' OR 1=1` on the list and in a replay filter, naming the field", () => {
    refused(list("sourceId=web&since=' OR 1=1"), 'since');
    refused(list('until=10000-01-01T00:00:00Z'), 'until');
    refused(parseReplayFilter({ since: "' OR 1=1" }), 'since');
    refused(parseReplayFilter({ until: 253_402_300_800_000 }), 'until');
    refused(parseReplayFilter({ since: 1.5 }), 'since');
    assert.deepEqual(parseReplayFilter({ since: 1_000, until: '1970-01-01T00:00:02Z' }), {
      ok: true,
      value: { since: 1_000, until: 2_000 },
    });
  });

  it('a replay filter takes every dead-letter reason, destination_deleted among them, and the schema lists the same', () => {
    for (const reason of DEAD_REASONS) assert.deepEqual(parseReplayFilter({ reason }), { ok: true, value: { reason } });
    refused(parseReplayFilter({ reason: 'gone' }), 'reason');
    const schema = openApiDocument.components.schemas.ReplayFilter as { properties: { reason: { enum: string[] } } };
    assert.deepEqual(schema.properties.reason.enum, [...DEAD_REASONS]);
    assert.ok(DEAD_REASONS.includes('destination_deleted'));
  });

  it('refuses a forged cursor as a 400 on `cursor`', () => {
    for (const cursor of [
      forged([1e20, 'web', 'm']),
      forged([-5, 'web', 'm']),
      forged([1.5, 'web', 'm']),
      forged([1_000, 'web\u0000', 'm']),
      forged([1_000, '', 'm']),
      forged([1_000, 'web', 'x'.repeat(201)]),
      forged([1_000, 'web']),
      forged({ receivedAt: 1 }),
      'not-base64!',
      'e30',
    ])
      refused(list(`cursor=${cursor}`), 'cursor');
    const real = encodeCursor({ receivedAt: 1_000, sourceId: 'web', messageId: 'has space' });
    assert.deepEqual(list(`cursor=${real}`), {
      ok: true,
      value: { limit: 50, cursor: { receivedAt: 1_000, sourceId: 'web', messageId: 'has space' } },
    });
  });

  it('refuses unknown and repeated parameters', () => {
    refused(list('expand=all'), 'expand');
    refused(list('limit=1&limit=2'), 'limit');
    assert.equal(checkParams(new URLSearchParams('window=1h'), ['window']), undefined);
    assert.equal(checkParams(new URLSearchParams('expand=all'), [])?.field, 'expand');
  });

  it('accepts every id the log can keep (spaces, any script) and refuses what it cannot', () => {
    for (const id of ['has space', 'rejected:sluice.rejected/0/12', 'ü/é?#', 'a'.repeat(200), '\ufffd'])
      assert.deepEqual(checkId('messageId', id), { ok: true, value: id });
    for (const id of ['', 'a'.repeat(201), 'nul\u0000', 'lone\ud800']) refused(checkId('messageId', id), 'messageId');
  });
});
