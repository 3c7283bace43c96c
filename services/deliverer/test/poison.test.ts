import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CodecError, SchemaRegistryUnavailableError } from '@sluice/codec';
import { ProducerThreadError, RecordBatcherClosedError } from '@sluice/kafka';
import { WebhookThreadError } from '../src/transport/webhook-thread.ts';
import { classifyFailure, failureMessage, MAX_REJECT_MESSAGE_CHARS, REJECT_REASONS } from '../src/intake/poison.ts';
import { isInfrastructureFailure } from '../src/intake/infrastructure-errors.ts';

describe('classifyFailure (one record vs. infrastructure)', () => {
  const table: [string, unknown, 'decode' | 'route' | 'render' | 'deliver', string][] = [
    ['a stack overflow while rendering', new RangeError('Maximum call stack size exceeded'), 'render', 'unrenderable'],
    ['a TypeError while delivering', new TypeError('x is not iterable'), 'deliver', 'undeliverable'],
    ['anything thrown while decoding', new Error('boom'), 'decode', 'undecodable'],
    ['a non-Error thrown while routing', 'a string', 'route', 'unroutable'],
    ['a codec error that retrying cannot help', new CodecError('invalid_value', 'bad', false), 'decode', 'undecodable'],
  ];
  for (const [what, err, step, reason] of table) {
    it(`${what} rejects the record as ${reason}`, () => {
      const verdict = classifyFailure(err, step, isInfrastructureFailure);
      assert.equal(verdict.kind, 'reject');
      assert.equal(verdict.kind === 'reject' && verdict.reason, reason);
      assert.ok((REJECT_REASONS as readonly string[]).includes(reason));
    });
  }

  const fatal: [string, unknown][] = [
    ['side records unwritten at shutdown', new RecordBatcherClosedError('closed')],
    ['the producer thread failed', new ProducerThreadError('KafkaJSError', 'broker gone')],
    ['the webhook thread died', new WebhookThreadError('webhook thread exited (code 1)')],
    ['the schema registry stayed unreachable', new SchemaRegistryUnavailableError('no registry')],
  ];
  for (const [what, err] of fatal) {
    it(`${what} is fatal for the consumer, never a rejection`, () => {
      assert.deepEqual(classifyFailure(err, 'deliver', isInfrastructureFailure), { kind: 'fatal' });
    });
  }

  it('keeps the error name and message, cut to a bounded length', () => {
    assert.equal(
      failureMessage(new RangeError('Maximum call stack size exceeded')),
      'RangeError: Maximum call stack size exceeded',
    );
    assert.equal(failureMessage(new Error('x'.repeat(10_000))).length, MAX_REJECT_MESSAGE_CHARS);
    assert.equal(failureMessage(42), 'thrown: 42');
    assert.equal(failureMessage(Object.create(null)), 'thrown: object');
  });
});
