import assert from 'node:assert/strict';
import { it } from 'node:test';
import { CodecError, InvalidValueError, SchemaRegistrationError, SchemaRegistryUnavailableError } from '@sluice/codec';
import { CodedError } from '@sluice/errors';

it('the codec errors derive from CodedError, each with its code and whether retrying may help', () => {
  const cause = new Error('ECONNREFUSED');
  const table: [CodecError, string, string, boolean][] = [
    [
      new SchemaRegistryUnavailableError('down', { cause }),
      'SchemaRegistryUnavailableError',
      'registry_unavailable',
      true,
    ],
    [
      new SchemaRegistrationError('s-value', 'incompatible'),
      'SchemaRegistrationError',
      'schema_registration_failed',
      false,
    ],
    [new InvalidValueError('not a string'), 'InvalidValueError', 'invalid_value', false],
  ];
  for (const [err, name, code, retryable] of table) {
    assert.ok(err instanceof CodecError && err instanceof CodedError, name);
    assert.deepEqual({ name: err.name, code: err.code, retryable: err.retryable }, { name, code, retryable });
  }
  assert.equal(table[0]![0].cause, cause);
});
