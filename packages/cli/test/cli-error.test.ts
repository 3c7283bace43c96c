import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CliError } from '@sluice/cli';
import { CodedError } from '@sluice/errors';

test('a CliError is a CodedError (cli_failed, not retryable) that carries its exit code, 1 unless given', () => {
  const usage = new CliError('SLUICE_API_URL is not set', 2);
  assert.ok(usage instanceof CodedError);
  assert.deepEqual(
    { name: usage.name, code: usage.code, retryable: usage.retryable, exitCode: usage.exitCode },
    { name: 'CliError', code: 'cli_failed', retryable: false, exitCode: 2 },
  );
  assert.equal(new CliError('failed').exitCode, 1);
});
