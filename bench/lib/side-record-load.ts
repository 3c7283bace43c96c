import { PRODUCER_THREAD_NAME, ProducerThread, RecordBatcher } from '@sluice/kafka';
import { createLogger } from '@sluice/logging';
import { startCpuWindow, startThreadCpuWindow } from './cpu-window.ts';

/** The fields of the deliverer's attempt record (docs/reference/delivery.md), so a record has its size. */
export function attemptRecordValue(messageId: string, endpoint: string, status: number, at: number): string {
  return JSON.stringify({
    messageId,
    sourceId: 's-bench',
    destinationId: 'd-bench',
    eventType: 'track',
    endpoint,
    attempt: 1,
    outcome: 'success',
    latencyMs: Date.now() - at,
    at: new Date(at).toISOString(),
    status,
  });
}

export interface SideRecordLoad {
  intervalMs: number;
  /** Records acknowledged per second, first send to last acknowledgement. */
  perSecond: number;
  recordsPerSend: number;
  sendsPerSecond: number;
  /** CPU of the producer thread, and of the main thread (RecordBatcher, packing, handing over), per record. */
  producerMicrosPerRecord: number | undefined;
  mainMicrosPerRecord: number | undefined;
  ackP50: number;
  ackP99: number;
}

/**
 * The deliverer's side-record path alone (a `RecordBatcher` with its linger and the given send
 * interval, on a one-producer `ProducerThread`), fed attempt-sized records at `rate` a second for
 * `seconds`, in steps of a millisecond as handlers would finish.
 */
export async function sideRecordLoad(options: {
  brokers: string[];
  topic: string;
  rate: number;
  seconds: number;
  lingerMs: number;
  intervalMs: number;
}): Promise<SideRecordLoad> {
  const logger = createLogger({ name: 'side-record-bench', level: process.env.LOG_LEVEL ?? 'warn' });
  const thread = await ProducerThread.start({
    service: 'side-record-bench',
    brokers: options.brokers,
    clientId: `side-record-bench-${process.pid}`,
    logLevel: logger.level,
    producers: 1,
  });
  let sends = 0;
  const producer = {
    sendBatch: (batch: Parameters<ProducerThread['sendBatch']>[0]) => (sends++, thread.sendBatch(batch)),
  };
  const batcher = new RecordBatcher(producer, {
    lingerMs: options.lingerMs,
    sendIntervalMs: options.intervalMs,
    logger,
  });
  const total = Math.round(options.rate * options.seconds);
  const latencies: number[] = new Array(total);
  const acks: Promise<void>[] = new Array(total);
  const cpu = startCpuWindow();
  const producerCpu = startThreadCpuWindow(PRODUCER_THREAD_NAME);
  const started = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1_000) * options.rate));
    const at = Date.now();
    const t0 = performance.now();
    for (; sent < due; sent++) {
      const i = sent;
      const value = attemptRecordValue(`side-${i}`, 'http://127.0.0.1:8080/hook', 200, at);
      acks[i] = batcher.send(options.topic, { key: `user-${i % 1_000}`, value }).then(() => {
        latencies[i] = performance.now() - t0;
      });
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(acks);
  const seconds = (performance.now() - started) / 1_000;
  const split = cpu();
  const producerSeconds = producerCpu();
  await batcher.flushThenClose();
  await thread.disconnect();
  latencies.sort((a, b) => a - b);
  return {
    intervalMs: options.intervalMs,
    perSecond: total / seconds,
    recordsPerSend: total / sends,
    sendsPerSecond: sends / seconds,
    producerMicrosPerRecord: producerSeconds === undefined ? undefined : (producerSeconds * 1e6) / total,
    mainMicrosPerRecord:
      split.benchMainThread === undefined ? undefined : (split.benchMainThread * seconds * 1e6) / total,
    ackP50: latencies[Math.floor(total * 0.5)]!,
    ackP99: latencies[Math.floor(total * 0.99)]!,
  };
}
