import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Ledger, ledgerAnswer, type Unaccounted, unaccountedAnswer } from '@sluice/log-api';

const totals = {
  sourceId: 'web',
  destinationId: 'hooks',
  accepted: 3,
  delivered: 1,
  filtered: 0,
  dead: 0,
  inFlight: 2,
  parked: 0,
  unaccounted: 1,
  oldestUnsettledAt: '2026-01-31T12:00:00.000Z',
  oldestUnsettledAgeSeconds: 90,
};
const ledger = (): Ledger => ({
  from: '2026-01-31T11:00:00.000Z',
  to: '2026-01-31T13:00:00.000Z',
  bucketSeconds: 86_400,
  unaccountedBefore: '2026-01-31T08:00:00.000Z',
  parkedDestinations: [],
  totals: [totals, { ...totals, destinationId: 'other', oldestUnsettledAt: null, oldestUnsettledAgeSeconds: null }],
  buckets: [{ ...totals, bucketStart: '2026-01-31T00:00:00.000Z' }],
});
const unaccounted = (): Unaccounted => ({
  unaccountedBefore: '2026-01-31T08:00:00.000Z',
  total: 1,
  unaccounted: [
    {
      sourceId: 'web',
      messageId: 'm-1',
      destinationId: 'hooks',
      state: 'retrying',
      stateAt: '2026-01-31T07:00:00.000Z',
      receivedAt: '2026-01-31T06:00:00.000Z',
      windowFrom: '2026-01-31T06:00:01.000Z',
      attempts: 4,
      lastError: 'HTTP 503',
      reason: 'retry_stopped',
      message: 'its last attempt failed',
    },
  ],
});

describe('the ledger answers of the delivery log API', () => {
  it('accept the answers as the API writes them, nulls where a field may be null', () => {
    assert.equal(ledgerAnswer.mismatch(ledger()), undefined);
    assert.ok(ledgerAnswer.is(ledger()));
    assert.equal(unaccountedAnswer.mismatch(unaccounted()), undefined);
    assert.ok(
      unaccountedAnswer.is({ ...unaccounted(), unaccounted: [{ ...unaccounted().unaccounted[0], lastError: null }] }),
    );
  });

  it('name the first field that departs from the type', () => {
    const cases: [unknown, string][] = [
      [null, '$'],
      [[ledger()], '$'],
      [{ ...ledger(), from: 'yesterday' }, 'from'],
      [{ ...ledger(), totals: undefined }, 'totals'],
      [{ ...ledger(), totals: [totals, { ...totals, accepted: '3' }] }, 'totals[1].accepted'],
      [{ ...ledger(), totals: [{ ...totals, dead: -1 }] }, 'totals[0].dead'],
      [{ ...ledger(), totals: [{ ...totals, sourceId: null }] }, 'totals[0].sourceId'],
      [{ ...ledger(), buckets: [totals] }, 'buckets[0].bucketStart'],
      [{ ...ledger(), parkedDestinations: [1] }, 'parkedDestinations[0]'],
    ];
    for (const [answer, field] of cases) {
      assert.equal(ledgerAnswer.mismatch(answer), field);
      assert.equal(ledgerAnswer.is(answer), false, field);
    }
    const delivery = unaccounted().unaccounted[0]!;
    assert.equal(
      unaccountedAnswer.mismatch({ ...unaccounted(), unaccounted: [{ ...delivery, state: 'delivered' }] }),
      'unaccounted[0].state',
    );
    assert.equal(
      unaccountedAnswer.mismatch({ ...unaccounted(), unaccounted: [{ ...delivery, reason: 'lost' }] }),
      'unaccounted[0].reason',
    );
    assert.equal(unaccountedAnswer.mismatch({ ...unaccounted(), total: 1.5 }), 'total');
  });
});
