import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CodedError } from '@sluice/errors';

class PartError extends CodedError {}
class PartTimeoutError extends PartError {
  constructor(ms: number, cause?: unknown) {
    super('part_timeout', `no answer in ${ms} ms`, true, { cause });
  }
}

describe('CodedError', () => {
  it('carries the code, whether retrying may help, the message and the cause', () => {
    const cause = new Error('socket hang up');
    const err = new PartTimeoutError(250, cause);
    assert.equal(err.code, 'part_timeout');
    assert.equal(err.retryable, true);
    assert.equal(err.message, 'no answer in 250 ms');
    assert.equal(err.cause, cause);
    assert.ok(err instanceof PartError && err instanceof CodedError && err instanceof Error);
  });

  it('is named after the class that was thrown, not after its base', () => {
    assert.equal(new PartTimeoutError(1).name, 'PartTimeoutError');
    assert.equal(new PartError('part_broken', 'broken', false).name, 'PartError');
    const fatal = new CodedError('fatal', 'stop', false);
    assert.equal(fatal.retryable, false);
    assert.equal(fatal.name, 'CodedError');
    assert.match(String(fatal), /^CodedError: stop$/);
  });
});
