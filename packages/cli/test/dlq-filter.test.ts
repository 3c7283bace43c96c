import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEAD_REASONS as ENVELOPE_REASONS } from '@sluice/envelope';
import { DEAD_REASONS, filterFromFlags } from '../src/domain/dlq-filter.ts';

test('--reason takes every dead-letter reason, destination_deleted among them; another is refused naming them all', () => {
  assert.equal(DEAD_REASONS, ENVELOPE_REASONS, "the envelope's one list");
  assert.deepEqual(filterFromFlags({ reason: 'destination_deleted', destination: 'billing' }), {
    destinationId: 'billing',
    reason: 'destination_deleted',
  });
  assert.deepEqual(filterFromFlags({ reason: 'no_endpoints' }), { reason: 'no_endpoints' });
  assert.throws(
    () => filterFromFlags({ reason: 'deleted' }),
    /--reason: must be one of window_exhausted, permanent_failure, no_endpoints, destination_deleted, undecodable/,
  );
});
