import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ValidationError } from '../src/errors.ts';
import { parseIso8601, toIsoTimestamp } from '../src/timestamp.ts';

describe('toIsoTimestamp', () => {
  const cases: Array<[string, string]> = [
    ['2026-11-21T23:34:15.123Z', '2026-11-21T23:34:15.123Z'],
    ['2026-11-21T23:34:15Z', '2026-11-21T23:34:15.000Z'],
    ['2026-11-21T23:00:00.5Z', '2026-11-21T23:00:00.500Z'],
    ['2026-11-21T23:00:00.123456789Z', '2026-11-21T23:00:00.123Z'],
    ['2015-02-03T08:24:14-0800', '2015-02-03T16:24:14.000Z'],
    ['2026-11-21T23:00:00+01:00', '2026-11-21T22:00:00.000Z'],
    ['2026-11-21T23:00:00+05', '2026-11-21T18:00:00.000Z'],
    ['2026-11-21 23:00:00z', '2026-11-21T23:00:00.000Z'],
    ['2026-11-21T23:00Z', '2026-11-21T23:00:00.000Z'],
    ['2026-11-21', '2026-11-21T00:00:00.000Z'],
  ];
  for (const [input, expected] of cases) {
    it(`normalises ${input}`, () => assert.equal(toIsoTimestamp(input), expected));
  }

  for (const bad of [
    '',
    'yesterday',
    '2026-11-21T23:00:00',
    '2026-02-30T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-11-21T24:00:00Z',
    '1700000000',
  ]) {
    it(`refuses ${JSON.stringify(bad)}`, () => {
      assert.equal(parseIso8601(bad), undefined);
      assert.throws(() => toIsoTimestamp(bad), ValidationError);
    });
  }
});
