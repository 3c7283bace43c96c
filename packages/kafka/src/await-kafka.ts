import type { Kafka } from 'kafkajs';
import { startHttpServer, type ServiceContext, type ServiceHttpServer } from '@sluice/service-kit';
import { describeKafkaFailure, type KafkaFailureCause } from './connection-failure.ts';
import { createKafka } from './kafka-client.ts';

export interface AwaitKafkaOptions {
  /** The service's HTTP port: `/healthz`, `/readyz` (false) and `/metrics` are served there while waiting. */
  port: number;
  host?: string;
  /** Stops the wait (SIGTERM before the service started): the promise rejects. */
  signal?: AbortSignal;
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
 * Waits, before a service starts, until the brokers accept a connection with the configured TLS
 * and SASL settings. Meanwhile the service's port answers `/readyz` 503 (`kafka: false`), and the
 * log has one error line naming the cause (authentication failed, certificate not trusted, broker
 * unreachable, ...) each time the cause changes — so a wrong password shows as itself instead of a
 * restart loop. Returns at once when the first attempt succeeds.
 */
export async function awaitKafka(ctx: ServiceContext, options: AwaitKafkaOptions): Promise<void> {
  const config = ctx.config.current;
  // kafkajs's own lines about the failed attempts would bury the one line that names the cause.
  const quiet = ctx.logger.child({ component: 'kafka-check' }, { level: 'fatal' });
  const clientId = `${config.kafka.clientId}-${ctx.name}-check`;
  let delayMs = options.initialDelayMs ?? 1_000;
  const maxDelayMs = options.maxDelayMs ?? 30_000;
  let lastCause: KafkaFailureCause | undefined;
  let http: ServiceHttpServer | undefined;
  try {
    for (let attempt = 1; ; attempt++) {
      options.signal?.throwIfAborted();
      try {
        // A new client per attempt: certificate files replaced meanwhile (a renewed CA) are read again.
        await checkKafkaConnection(
          createKafka({ brokers: ctx.brokers, clientId, logger: quiet, security: config.kafka, retries: 0 }),
        );
        if (lastCause) ctx.logger.info({ attempt }, 'Kafka: connected; starting');
        return;
      } catch (err) {
        const failure = describeKafkaFailure(err);
        if (failure.cause !== lastCause) ctx.logger.error({ cause: failure.cause, brokers: ctx.brokers }, failure.line);
        else ctx.logger.debug({ cause: failure.cause, attempt, retryInMs: delayMs }, failure.line);
        lastCause = failure.cause;
      }
      http ??= await startHttpServer({
        port: options.port,
        ...(options.host && { host: options.host }),
        ops: { registry: ctx.registry, readiness: { kafka: () => false } },
      });
      await abortableSleep(delayMs, options.signal);
      delayMs = Math.min(delayMs * 2, maxDelayMs);
    }
  } finally {
    if (http) {
      // A stand-in server: drop keep-alive connections (probes) so the service can bind the port at once.
      const closed = http.close();
      http.server.closeAllConnections();
      await closed;
    }
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
