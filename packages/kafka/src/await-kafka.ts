import type { Kafka } from 'kafkajs';
import type { KafkaSecurity } from '@sluice/config';
import type { Logger } from '@sluice/logging';
import { describeKafkaFailure, type KafkaFailureCause } from './connection-failure.ts';
import { createKafka } from './kafka-client.ts';
import { isRetriableBrokerAnswer } from './retriable-error.ts';

export interface AwaitKafkaOptions {
  brokers: string[];
  /** Client id of the check's own client. */
  clientId: string;
  /** TLS and SASL settings (`kafka.ssl`, `kafka.sasl`), as the service's clients will use them. */
  security?: KafkaSecurity;
  logger: Logger;
  /** Stops the wait (SIGTERM before the service started): the promise rejects with its reason. */
  signal?: AbortSignal;
  /**
   * Called once, when the first attempt failed and the wait begins (a service answers its probes
   * from then on); the wait goes on when it resolves, and ends with its error if it throws.
   */
  onWaiting?: () => void | Promise<void>;
  /** First wait between attempts; doubles up to `maxDelayMs`. Defaults 1 s and 30 s. */
  initialDelayMs?: number;
  maxDelayMs?: number;
}

/** One connect + metadata request. Build `kafka` with `retries: 0` so that the caller owns the backoff. */
export async function checkKafkaConnection(kafka: Kafka): Promise<void> {
  const admin = kafka.admin({ retry: { retries: 0 } });
  try {
    await admin.connect();
    await admin.describeCluster();
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/**
 * Waits until the brokers accept a connection with the configured TLS and SASL settings. The log
 * has one error line naming the cause (authentication failed, certificate not trusted, broker
 * unreachable, ...) each time the cause changes, so a wrong password shows as itself instead of
 * a restart loop. Returns at once when the first attempt succeeds.
 */
export async function awaitKafka(options: AwaitKafkaOptions): Promise<void> {
  const { logger, brokers } = options;
  // kafkajs's own lines about the failed attempts would bury the one line that names the cause.
  const quiet = logger.child({ component: 'kafka-check' }, { level: 'fatal' });
  let delayMs = options.initialDelayMs ?? 1_000;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  let lastCause: KafkaFailureCause | undefined;
  for (let attempt = 1; ; attempt++) {
    options.signal?.throwIfAborted();
    try {
      // A new client per attempt: certificate files replaced meanwhile (a renewed CA) are read again.
      await checkKafkaConnection(
        createKafka({
          brokers,
          clientId: options.clientId,
          logger: quiet,
          ...(options.security && { security: options.security }),
          retries: 0,
        }),
      );
      if (lastCause) logger.info({ attempt }, 'Kafka: connected; starting');
      return;
    } catch (err) {
      // The broker answered "not yet" about partitions: it accepts the connection, which is all
      // this waits for; the start-up retry waits out such answers within its deadline.
      if (isRetriableBrokerAnswer(err)) {
        if (lastCause) logger.info({ attempt }, 'Kafka: connected; starting');
        return;
      }
      const failure = describeKafkaFailure(err);
      if (failure.cause !== lastCause) logger.error({ cause: failure.cause, brokers }, failure.line);
      else logger.debug({ cause: failure.cause, attempt, retryInMs: delayMs }, failure.line);
      if (lastCause === undefined) await options.onWaiting?.();
      lastCause = failure.cause;
    }
    await abortableSleep(delayMs, options.signal);
    delayMs = Math.min(delayMs * 2, maxDelayMs);
  }
}

function abortableSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
