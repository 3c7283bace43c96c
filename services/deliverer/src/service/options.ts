import type { EnvelopeCodec } from '@sluice/codec';
import type { Admin, Kafka } from '@sluice/kafka';
import type { ServiceContext, ServiceLifecycle } from '@sluice/service-kit';
import type { LookupFunction } from '@sluice/webhook';
import type { WebhookClient } from '../transport/webhook-client.ts';

export interface DelivererOptions {
  /** Port of /metrics, /healthz and /readyz (0 picks a free one). */
  port: number;
  /** Reads `sluice.events`; default the JSON codec. */
  codec?: EnvelopeCodec;
  /** Injected in tests to simulate DNS answers for the SSRF guard; default `dns.lookup`. */
  lookup?: LookupFunction;
  /** Replaces the undici client (tests of the Kafka side, benchmarks). */
  webhookClient?: WebhookClient;
  /**
   * Run the webhook requests in a worker thread (default true): undici's request writing and
   * response parsing then run beside the main thread's Kafka and rendering work. Off (or a
   * `lookup` given, which cannot cross threads) → the same client on the main thread.
   */
  webhookThread?: boolean;
  /** Time allowed at shutdown for in-flight deliveries; default 20 s. */
  drainTimeoutMs?: number;
  /** Interval of the consumer lag reads (docs/reference/observability.md); default 10 s. */
  lagIntervalMs?: number;
  /** Least time between two writes of side records under load (benchmarks compare); default 10 ms. */
  sideRecordIntervalMs?: number;
  /** The deliverer's clock for auto-disable and operator events; default `Date.now`. */
  now?: () => number;
  /** Waits before each retry of an operator event; default about a minute in six tries. */
  operatorBackoffMs?: readonly number[];
  /** How often a resumed destination's parked topic is checked for being drained; default 250 ms. */
  parkCheckIntervalMs?: number;
  /** How often consumed records of the waiting topics are deleted (docs/reference/ordering.md); default a minute. */
  waitingTrimIntervalMs?: number;
}

/**
 * What every part of the deliverer is started with (`createDeliverer` wires them in this order):
 * the service's context and lifecycle (each part adds its stop to it), the options, and the
 * Kafka client and admin of the process.
 */
export interface StartContext {
  ctx: ServiceContext;
  life: ServiceLifecycle;
  options: DelivererOptions;
  kafka: Kafka;
  admin: Admin;
}
