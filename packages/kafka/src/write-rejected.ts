import type { Message } from 'kafkajs';
import type { Logger } from '@sluice/logging';
import { SideRecordRefusedError } from './errors.ts';
import type { RecordSink } from './record-batcher.ts';

export interface RejectedWrite {
  sink: RecordSink;
  /** The rejected topic. */
  topic: string;
  /** The rejected record: the original value, the reason in its headers. */
  message: Message;
  /** The header that says the value was dropped, set to the broker's reason (`REJECT_HEADERS.valueDropped`). */
  valueDroppedHeader: string;
  logger: Logger;
}

/**
 * Writes a record to the rejected topic so that the consumer that rejected it can always go on.
 * Kafka may refuse the rejected record for its own content (`SideRecordRefusedError`: the original
 * value plus the reason headers is over the rejected topic's size limit): it is then written again
 * without its value (`valueDroppedHeader` = the broker's reason; the other headers, its `from`
 * above all, still say what and where the original was). Were that refused too, the record is
 * logged (without content) and left: it is counted in `sluice_side_records_refused_total`.
 * Any other failure (the batcher closed at shutdown) is thrown on, as before.
 */
export async function writeRejected(write: RejectedWrite): Promise<'written' | 'without_value' | 'dropped'> {
  const { sink, topic, message, logger } = write;
  try {
    await sink.send(topic, message);
    return 'written';
  } catch (err) {
    if (!(err instanceof SideRecordRefusedError)) throw err;
    const headers = { ...message.headers, [write.valueDroppedHeader]: err.reason };
    try {
      await sink.send(topic, { ...message, value: null, headers });
      return 'without_value';
    } catch (again) {
      if (!(again instanceof SideRecordRefusedError)) throw again;
      logger.error(
        { topic, reason: again.reason },
        'rejected record refused by Kafka, even without its value: dropped',
      );
      return 'dropped';
    }
  }
}
