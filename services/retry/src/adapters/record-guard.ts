import { ProducerThreadError, RecordBatcherClosedError, type ConsumedRecord } from '@sluice/kafka';
import { UnprocessableRetryRecordError } from '../errors.ts';
import type { Router } from './router.ts';

/** Longest failure message kept on a rejected record. */
const MAX_MESSAGE_CHARS = 1_000;

/**
 * Runs the handling of one record so that no failure of that record stops its partition: anything
 * it throws sends the record to `sluice.rejected` (`unprocessable`, with the error's message),
 * except a failure to write to Kafka (the batcher closed at shutdown, the producer failed), which
 * is thrown on and ends the consumer, the record's offset uncommitted.
 */
export async function guardRecord(record: ConsumedRecord, router: Router, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    if (err instanceof RecordBatcherClosedError || err instanceof ProducerThreadError) throw err;
    const text = err instanceof Error ? `${err.name}: ${err.message}` : `thrown: ${String(err)}`;
    const message = text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS - 1)}…` : text;
    await router.reject(record, new UnprocessableRetryRecordError(message, { cause: err }));
  }
}
