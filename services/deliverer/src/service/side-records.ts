import { RecordBatcher } from '@sluice/kafka';
import { PRODUCE_INTERVAL_MS, PRODUCE_LINGER_MS } from './constants.ts';
import type { StartContext } from './options.ts';

/**
 * The side records (one attempt record per request, retries, dead letters), encoded by kafkajs in a
 * producer thread: the largest Kafka cost of a delivery then runs beside the HTTP work. Under load
 * they leave at most once per interval, so each request carries hundreds of records.
 */
export async function startSideRecords(start: StartContext): Promise<RecordBatcher> {
  const { ctx, life, options } = start;
  const producer = await life.producerThread(1);
  const sink = new RecordBatcher(producer, {
    lingerMs: PRODUCE_LINGER_MS,
    sendIntervalMs: options.sideRecordIntervalMs ?? PRODUCE_INTERVAL_MS,
    logger: ctx.logger,
    registry: ctx.registry,
  });
  life.add({ name: 'side records', stop: () => sink.flushThenClose() });
  return sink;
}
