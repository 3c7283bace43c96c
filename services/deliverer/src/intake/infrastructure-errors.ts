import { CodecError } from '@sluice/codec';
import { ProducerThreadError, RecordBatcherClosedError, StartupDeadlineError } from '@sluice/kafka';
import { WebhookThreadError } from '../transport/webhook-thread.ts';

/**
 * Failures that are not the fault of the record being handled: its side records could not be
 * written (Kafka away until shutdown, the producer thread failed), a topic created at its first use
 * (a parked or waiting topic) could not be within its deadline, the webhook thread died, or the
 * schema registry stayed unreachable. The record handler lets these end the consumer (the
 * record's offset stays uncommitted, so it is handled again after the restart); everything else
 * thrown for one record sends that record to `sluice.rejected`.
 */
export function isInfrastructureFailure(err: unknown): boolean {
  return (
    err instanceof RecordBatcherClosedError ||
    err instanceof ProducerThreadError ||
    err instanceof StartupDeadlineError ||
    err instanceof WebhookThreadError ||
    (err instanceof CodecError && err.retryable)
  );
}
