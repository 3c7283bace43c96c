import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadVector } from '@sluice/testkit';
import fc from 'fast-check';
import { formatTimestamp, normaliseTimes, parseTimestamp } from '../src/domain/timestamps.ts';

interface Vector {
  cases: {
    name: string;
    timestamp: string | null;
    sentAt: string | null;
    receivedAt: string;
    expect: { timestamp: string; originalTimestamp?: string };
  }[];
}

test('every case of test/vectors/timestamps.json', () => {
  const { cases } = loadVector<Vector>('timestamps.json');
  assert.ok(cases.length >= 5);
  for (const c of cases) {
    const out = normaliseTimes({
      timestamp: c.timestamp ?? undefined,
      sentAt: c.sentAt ?? undefined,
      receivedAt: Date.parse(c.receivedAt),
    });
    assert.equal(out.timestamp, c.expect.timestamp, c.name);
    if (c.expect.originalTimestamp) assert.equal(out.originalTimestamp, c.expect.originalTimestamp, c.name);
    assert.equal(out.receivedAt, new Date(c.receivedAt).toISOString(), c.name);
    if (c.timestamp === null) assert.equal(out.originalTimestamp, undefined, c.name);
  }
});

test('common ISO 8601 forms are read', () => {
  const table: [string, string][] = [
    ['2015-02-03T08:24:14-0800', '2015-02-03T16:24:14.000Z'],
    ['2015-02-03T08:24:14-08:00', '2015-02-03T16:24:14.000Z'],
    ['2015-02-03T08:24:14+05', '2015-02-03T03:24:14.000Z'],
    ['2015-02-03T08:24:14.123456789Z', '2015-02-03T08:24:14.123Z'],
    ['2015-02-03T08:24:14,5+01:00', '2015-02-03T07:24:14.500Z'],
    ['2015-02-03 08:24:14Z', '2015-02-03T08:24:14.000Z'],
    ['2015-02-03T08:24Z', '2015-02-03T08:24:00.000Z'],
    ['2015-02-03T08:24:14', '2015-02-03T08:24:14.000Z'],
    ['2015-02-03', '2015-02-03T00:00:00.000Z'],
  ];
  for (const [input, expected] of table) assert.equal(new Date(parseTimestamp(input)!).toISOString(), expected, input);
});

test('unreadable values are absent and fall back to receivedAt', () => {
  for (const bad of ['yesterday', '2015-02-30T00:00:00Z', '2015-13-01T00:00:00Z', 12345, {}, '']) {
    assert.equal(parseTimestamp(bad), undefined, String(bad));
  }
  const out = normaliseTimes({
    timestamp: 'garbage',
    sentAt: '2026-01-01T00:00:00Z',
    receivedAt: Date.parse('2026-01-01T00:00:01.250Z'),
  });
  assert.deepEqual(out, {
    timestamp: '2026-01-01T00:00:01.250Z',
    receivedAt: '2026-01-01T00:00:01.250Z',
    sentAt: '2026-01-01T00:00:00.000Z',
  });
});

test('the toISOString form (read without the regex) gives the same answers as the general reader', () => {
  const table: [string, string | undefined][] = [
    ['2015-02-03T08:24:14.123Z', '2015-02-03T08:24:14.123Z'],
    ['2024-02-29T12:00:00.000Z', '2024-02-29T12:00:00.000Z'],
    ['2000-02-29T00:00:00.000Z', '2000-02-29T00:00:00.000Z'],
    ['2023-02-29T12:00:00.000Z', undefined],
    ['1900-02-29T12:00:00.000Z', undefined],
    ['2015-04-31T00:00:00.000Z', undefined],
    ['2015-12-31T23:59:59.999Z', '2015-12-31T23:59:59.999Z'],
    ['2015-12-31T24:00:00.000Z', undefined],
    ['2015-1a-31T00:00:00.000Z', undefined],
  ];
  for (const [input, expected] of table) {
    const ms = parseTimestamp(input);
    assert.equal(ms === undefined ? undefined : new Date(ms).toISOString(), expected, input);
    // The general reader (same value with a `+00:00` zone) agrees.
    const general = parseTimestamp(input.replace('Z', '+00:00'));
    assert.equal(general, ms, input);
  }
  const out = normaliseTimes({
    timestamp: '2026-01-01T00:00:00.500Z',
    sentAt: '2026-01-01T00:00:01.000Z',
    receivedAt: Date.parse('2026-01-01T00:00:05.000Z'),
  });
  assert.deepEqual(out, {
    timestamp: '2026-01-01T00:00:04.500Z',
    receivedAt: '2026-01-01T00:00:05.000Z',
    sentAt: '2026-01-01T00:00:01.000Z',
    originalTimestamp: '2026-01-01T00:00:00.500Z',
  });
});

test('formatTimestamp writes what Date#toISOString writes, day cache or not', () => {
  const near = Date.parse('2026-11-21T23:59:59.000Z');
  fc.assert(
    fc.property(
      fc.oneof(
        fc.integer({ min: near - 2 * 86_400_000, max: near + 2 * 86_400_000 }),
        fc.integer({ min: -62_198_755_200_000, max: 253_402_300_799_999 }),
        fc.double({ min: -1e13, max: 1e13, noNaN: true }),
      ),
      (ms) => {
        assert.equal(formatTimestamp(ms), new Date(ms).toISOString());
      },
    ),
    { numRuns: 20_000, seed: 20261122 },
  );
  for (const ms of [0, -1, 86_399_999, 86_400_000, -86_400_000, 253_402_300_800_000, -62_198_755_200_001])
    assert.equal(formatTimestamp(ms), new Date(ms).toISOString());
});
