import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { testRetryState } from '@sluice/testkit';
import type { DeliveryJob } from '../src/intake/delivery-job.ts';
import { PARKED_HEADER, parkedHeaders, unparkJob } from '../src/parking/parked-job.ts';
import { attemptWindow, checkWindow } from '../src/attempt/window.ts';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;
const WINDOW = 4 * HOUR;
const job = (over: Partial<DeliveryJob> = {}): DeliveryJob => ({
  key: 'src:user-1',
  body: Buffer.from('{"type":"track"}'),
  messageId: 'm-1',
  sourceId: 'src',
  destinationId: 'd',
  eventType: 'track',
  endpoints: ['https://a.example/h'],
  receivedAt: new Date(T0).toISOString(),
  ...over,
});

describe('parked records', () => {
  it('carry the job whole: the same job comes out, the key and body being the record own', () => {
    const headers = parkedHeaders(job(), T0, T0 + 1_000);
    const out = unparkJob({ key: 'src:user-1', body: Buffer.from('{"type":"track"}'), headers }, T0 + 1_000);
    assert.ok(out.ok);
    assert.deepEqual(out.job, job());
    assert.equal(out.acceptedAt, T0);
    assert.equal(out.parkedMs, 0);
  });

  it('the window counts only time not spent parked: a fresh event parked 6 h still has its 4 h window', () => {
    const parkedAt = T0 + HOUR; // waited 1 h for its turn, then parked for 6 h
    const out = unparkJob(
      { key: 'k', body: Buffer.from('x'), headers: parkedHeaders(job(), T0, parkedAt) },
      parkedAt + 6 * HOUR,
    );
    assert.ok(out.ok);
    assert.equal(out.parkedMs, 6 * HOUR);
    const now = parkedAt + 6 * HOUR + 2 * HOUR; // 1 h + 2 h of window used
    const window = attemptWindow(out.job, out.acceptedAt, WINDOW)!;
    assert.deepEqual(checkWindow(window, now), { open: true });
    // Without the rule the window would have closed 5 h before.
    assert.equal(checkWindow(attemptWindow(out.job, T0, WINDOW)!, now).open, false);
    assert.equal(checkWindow(window, now + 1 * HOUR + 1).open, false, 'the 4 h still end');
  });

  it('a retried event keeps its history; its first attempt time moves later by the time parked', () => {
    const previous = testRetryState({ firstAttemptAt: T0, attempts: 3, destinationId: 'd' });
    const parked = parkedHeaders(job({ previous }), undefined, T0 + 2 * HOUR);
    const out = unparkJob({ key: 'k', body: Buffer.from('x'), headers: parked }, T0 + 5 * HOUR);
    assert.ok(out.ok);
    assert.equal(out.job.previous?.firstAttemptAt, T0 + 3 * HOUR);
    assert.equal(out.job.previous?.attempts, 3);
    assert.deepEqual(out.job.previous?.history, previous.history);
    assert.equal(out.acceptedAt, undefined);
  });

  it('an unreadable header is refused with why', () => {
    const body = Buffer.from('x');
    assert.equal(unparkJob({ key: 'k', body, headers: {} }, T0).ok, false);
    assert.equal(unparkJob({ key: 'k', body, headers: { [PARKED_HEADER]: 'nope' } }, T0).ok, false);
    const partial = unparkJob(
      { key: 'k', body, headers: { [PARKED_HEADER]: JSON.stringify({ messageId: 'm', parkedAt: T0 }) } },
      T0,
    );
    assert.deepEqual(partial, { ok: false, message: `${PARKED_HEADER} header lacks a field the delivery needs` });
  });
});
