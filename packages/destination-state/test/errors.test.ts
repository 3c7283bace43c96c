import assert from 'node:assert/strict';
import { it } from 'node:test';
import { DestinationStateError, InvalidStateValueError } from '@sluice/destination-state';
import { CodedError } from '@sluice/errors';

it('the destination-state errors derive from CodedError, with their code and whether retrying may help', () => {
  const err = new InvalidStateValueError('demo', 'no state');
  assert.ok(err instanceof DestinationStateError && err instanceof CodedError);
  assert.deepEqual(
    { name: err.name, code: err.code, retryable: err.retryable, message: err.message },
    {
      name: 'InvalidStateValueError',
      code: 'invalid_destination_state',
      retryable: false,
      message: 'state of demo not written: no state',
    },
  );
});
