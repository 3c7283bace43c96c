import assert from 'node:assert/strict';
import { it } from 'node:test';
import { DeadLetterError, InvalidFilterError, ReadTimeoutError } from '@sluice/dead-letters';
import { CodedError } from '@sluice/errors';

it('the dead-letter errors derive from CodedError, each with its code and whether retrying may help', () => {
  const table: [DeadLetterError, string, string, boolean][] = [
    [new ReadTimeoutError('sluice.dead-letter', 5_000), 'ReadTimeoutError', 'dead_letter_read_timeout', true],
    [new InvalidFilterError('since is after until'), 'InvalidFilterError', 'invalid_dead_letter_filter', false],
  ];
  for (const [err, name, code, retryable] of table) {
    assert.ok(err instanceof DeadLetterError && err instanceof CodedError, name);
    assert.deepEqual({ name: err.name, code: err.code, retryable: err.retryable }, { name, code, retryable });
  }
});
