import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCanonicalTimestamp } from '../src/index.ts';

test('a canonical timestamp is read to the millisecond and is its own toISOString', () => {
  for (const value of [
    '2026-11-22T02:48:11.123Z',
    '2024-02-29T23:59:59.999Z',
    '2000-01-01T00:00:00.000Z',
    '0100-03-01T12:00:00.000Z',
  ]) {
    const ms = parseCanonicalTimestamp(value);
    assert.equal(ms, Date.parse(value), value);
    assert.equal(new Date(ms!).toISOString(), value);
  }
});

test('anything else is left to the general parsers: other forms, impossible dates, years below 100', () => {
  for (const value of [
    '2026-02-30T00:00:00.000Z', // Date.parse rolls this over to March 2
    '2026-02-29T00:00:00.000Z',
    '2026-04-31T00:00:00.000Z',
    '2026-01-01T24:00:00.000Z',
    '2026-01-01T23:60:00.000Z',
    '2026-13-01T00:00:00.000Z',
    '0099-01-01T00:00:00.000Z',
    '2026-11-22T02:48:11Z',
    '2026-11-22T02:48:11.123+00:00',
    '2026-11-22 02:48:11.123Z',
    '2026-11-22T02:48:11.12aZ',
    '',
  ]) {
    assert.equal(parseCanonicalTimestamp(value), undefined, value);
  }
});
