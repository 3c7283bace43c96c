import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextAttempt, type BackoffSettings } from '../src/domain/backoff.ts';

const S = 1_000;
const settings: BackoffSettings = {
  windowMs: 4 * 3_600 * S,
  scheduleMs: [10 * S, 30 * S, 60 * S, 3_600 * S],
  jitter: 0.1,
};
const T0 = 1_700_000_000_000;

// random() = 0.5 means no jitter, 0 the lowest factor (0.9), just under 1 the highest (1.1).
const table: {
  name: string;
  state: { firstAttemptAt: number; attempts: number; retryAfterMs?: number; windowMs?: number };
  now: number;
  random: number;
  expect: { kind: 'retry'; dueAt: number; clipped: boolean } | { kind: 'dead' };
}[] = [
  {
    name: 'first retry waits schedule[0]',
    state: { firstAttemptAt: T0, attempts: 1 },
    now: T0 + 50,
    random: 0.5,
    expect: { kind: 'retry', dueAt: T0 + 50 + 10 * S, clipped: false },
  },
  {
    name: 'jitter low end is -10 %',
    state: { firstAttemptAt: T0, attempts: 1 },
    now: T0,
    random: 0,
    expect: { kind: 'retry', dueAt: T0 + 9 * S, clipped: false },
  },
  {
    name: 'jitter high end is +10 %',
    state: { firstAttemptAt: T0, attempts: 1 },
    now: T0,
    random: 0.999_999,
    expect: { kind: 'retry', dueAt: T0 + 11 * S, clipped: false },
  },
  {
    name: 'retry n uses schedule[n-1]',
    state: { firstAttemptAt: T0, attempts: 3 },
    now: T0 + 100 * S,
    random: 0.5,
    expect: { kind: 'retry', dueAt: T0 + 160 * S, clipped: false },
  },
  {
    name: 'past the schedule the last entry repeats',
    state: { firstAttemptAt: T0, attempts: 9 },
    now: T0 + 1_000 * S,
    random: 0.5,
    expect: { kind: 'retry', dueAt: T0 + 4_600 * S, clipped: false },
  },
  {
    name: 'attempts 0 counts as the first retry',
    state: { firstAttemptAt: T0, attempts: 0 },
    now: T0,
    random: 0.5,
    expect: { kind: 'retry', dueAt: T0 + 10 * S, clipped: false },
  },
  {
    name: 'Retry-After replaces the schedule, without jitter',
    state: { firstAttemptAt: T0, attempts: 1, retryAfterMs: 120 * S },
    now: T0,
    random: 0,
    expect: { kind: 'retry', dueAt: T0 + 120 * S, clipped: false },
  },
  {
    name: 'Retry-After 0 means now',
    state: { firstAttemptAt: T0, attempts: 2, retryAfterMs: 0 },
    now: T0 + 5 * S,
    random: 0.5,
    expect: { kind: 'retry', dueAt: T0 + 5 * S, clipped: false },
  },
  {
    name: 'clipped to the window end: the last attempt lands there',
    state: { firstAttemptAt: T0, attempts: 8 },
    now: T0 + 3.5 * 3_600 * S,
    random: 0.5,
    expect: { kind: 'retry', dueAt: T0 + 4 * 3_600 * S, clipped: true },
  },
  {
    name: 'Retry-After beyond the window is capped by it',
    state: { firstAttemptAt: T0, attempts: 1, retryAfterMs: 5 * 3_600 * S },
    now: T0,
    random: 0.5,
    expect: { kind: 'retry', dueAt: T0 + 4 * 3_600 * S, clipped: true },
  },
  {
    name: 'one ms before the window end still gets its last attempt',
    state: { firstAttemptAt: T0, attempts: 12 },
    now: T0 + 4 * 3_600 * S - 1,
    random: 0.5,
    expect: { kind: 'retry', dueAt: T0 + 4 * 3_600 * S, clipped: true },
  },
  {
    name: 'at the window end: dead, no attempt starts after it',
    state: { firstAttemptAt: T0, attempts: 12 },
    now: T0 + 4 * 3_600 * S,
    random: 0.5,
    expect: { kind: 'dead' },
  },
  {
    name: 'after the window end: dead',
    state: { firstAttemptAt: T0, attempts: 13 },
    now: T0 + 5 * 3_600 * S,
    random: 0.5,
    expect: { kind: 'dead' },
  },
  {
    name: "a replay's window overrides the configured one",
    state: { firstAttemptAt: T0, attempts: 1, windowMs: 20 * S },
    now: T0 + 15 * S,
    random: 0.5,
    expect: { kind: 'retry', dueAt: T0 + 20 * S, clipped: true },
  },
  {
    name: "a replay's short window can be spent",
    state: { firstAttemptAt: T0, attempts: 1, windowMs: 20 * S },
    now: T0 + 21 * S,
    random: 0.5,
    expect: { kind: 'dead' },
  },
];

describe('nextAttempt (docs/reference/retries.md backoff)', () => {
  for (const row of table) {
    it(row.name, () => {
      const decision = nextAttempt({ state: row.state, settings, now: row.now, random: () => row.random });
      assert.equal(decision.kind, row.expect.kind);
      if (decision.kind === 'retry' && row.expect.kind === 'retry') {
        assert.equal(decision.dueAt, row.expect.dueAt);
        assert.equal(decision.clipped, row.expect.clipped);
        assert.equal(decision.waitMs, row.expect.dueAt - row.now);
      }
    });
  }

  it('jitter stays within ±jitter over many draws, and is never negative', () => {
    for (let i = 0; i < 1_000; i++) {
      const d = nextAttempt({ state: { firstAttemptAt: T0, attempts: 2 }, settings, now: T0, random: Math.random });
      assert.equal(d.kind, 'retry');
      if (d.kind === 'retry') assert.ok(d.waitMs >= 27 * S && d.waitMs <= 33 * S, String(d.waitMs));
    }
  });
});
