import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RetryState } from '@sluice/envelope';
import { acceptedAt, attemptWindow, checkWindow, LAST_RETRY_GRACE_MS } from '../src/attempt/window.ts';

const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const H4 = 4 * 3_600_000;

const previous = (extra: Partial<RetryState> = {}): RetryState => ({
  messageId: 'm',
  sourceId: 's',
  destinationId: 'd',
  eventType: 'track',
  endpoints: ['a'],
  firstAttemptAt: T0,
  attempts: 3,
  history: [],
  ...extra,
});

describe('the attempt window (injected clock)', () => {
  it('a first attempt counts from acceptance, with no tolerance', () => {
    const w = attemptWindow({}, T0, H4)!;
    assert.deepEqual(w, { opensAt: T0, lengthMs: H4, graceMs: 0 });
    assert.deepEqual(checkWindow(w, T0), { open: true });
    assert.deepEqual(checkWindow(w, T0 + H4), { open: true });
    const closed = checkWindow(w, T0 + H4 + 1);
    assert.equal(closed.open, false);
    assert.equal(!closed.open && closed.closedAt, T0 + H4);
    assert.match(!closed.open ? closed.message : '', /closed at 2026-11-21T16:00:00.000Z, 1 ms before/);
  });

  it('an event that waited in the topic longer than the window (consumer lag) is not attempted', () => {
    assert.equal(checkWindow(attemptWindow({}, T0, H4)!, T0 + 5 * 3_600_000).open, false);
  });

  it('a retry counts from its first attempt, and the last retry (due at the window end) may start a little late', () => {
    const w = attemptWindow({ previous: previous() }, T0 + 3_600_000, H4)!;
    assert.equal(w.opensAt, T0, 'the acceptance time of the record on sluice.redeliver is not used');
    assert.equal(checkWindow(w, T0 + H4 + LAST_RETRY_GRACE_MS).open, true);
    assert.equal(checkWindow(w, T0 + H4 + LAST_RETRY_GRACE_MS + 1).open, false);
  });

  it('a replay carries its own window, which wins over the configured one', () => {
    const w = attemptWindow({ previous: previous({ windowMs: 60_000 }) }, undefined, H4)!;
    assert.equal(w.lengthMs, 60_000);
    assert.equal(checkWindow(w, T0 + 60_000 + LAST_RETRY_GRACE_MS + 1).open, false);
  });

  it('without an acceptance time the window is unknown and the event is attempted', () => {
    assert.equal(attemptWindow({}, undefined, H4), undefined);
  });

  it('acceptance is the Kafka record timestamp; receivedAt only when the record has none', () => {
    assert.equal(
      acceptedAt(T0, '2020-01-01T00:00:00.000Z'),
      T0,
      'a backfill with an old receivedAt is not dead-lettered',
    );
    assert.equal(acceptedAt(-1, '2026-11-21T12:00:00.000Z'), T0);
    assert.equal(acceptedAt(Number.NaN, '2026-11-21T12:00:00.000Z'), T0);
    assert.equal(acceptedAt(-1, 'not a date'), undefined);
    assert.equal(acceptedAt(0, undefined), undefined);
  });
});
