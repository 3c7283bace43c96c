import { createEnvelopeCodec, type EnvelopeCodec } from '@sluice/codec';
import type { SluiceConfig } from '@sluice/config';
import { startDestinationStateReader } from '@sluice/destination-state';
import { randomUUID } from 'node:crypto';
import { ConcurrentConsumer, ConsumerMetrics, copartitionedAssigner, RecordBatcher } from '@sluice/kafka';
import { defineService, type RunningService, type ServiceContext, type ServiceLifecycle } from '@sluice/service-kit';
import { OPERATOR_GROUP_SUFFIX, PRODUCE_INTERVAL_MS, PRODUCE_LINGER_MS } from './constants.ts';
import type { LookupFunction } from '../transport/guarded-connector.ts';
import { TimeoutLog } from '../transport/timeout-log.ts';
import { UndiciWebhookClient, type WebhookClient } from '../transport/webhook-client.ts';
import { WebhookThread } from '../transport/webhook-thread.ts';
import {
  addressPolicy,
  delivererGroupId,
  endpointOrigins,
  parkedGroupId,
  poolSettings,
  webhookThreadSettings,
} from './config.ts';
import { Delivery } from '../attempt/delivery.ts';
import { EndpointGates } from '../attempt/endpoint-gates.ts';
import { createParkedHandler } from '../intake/handle-parked.ts';
import { createRecordHandler, type RecordHandlerDeps } from '../intake/handle-record.ts';
import { IsolationMetrics } from '../attempt/isolation-metrics.ts';
import { DelivererMetrics } from './metrics.ts';
import { DestinationHealth } from '../attempt/health/destination-health.ts';
import { OrderingStore, type OrderingStoreDeps } from '../ordering/ordering-store.ts';
import { Ordering } from '../ordering/ordering.ts';
import { QueueStates } from '../ordering/queue-states.ts';
import { startWaitingTrim } from '../ordering/waiting-trim.ts';
import { Parking } from '../parking/parking.ts';

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

export interface DelivererService extends RunningService {
  port: number;
}

/**
 * The deliverer (docs/reference/routing.md, delivery.md): consumes `sluice.events` and `sluice.redeliver`, POSTs signed
 * webhooks, and hands failures to the retry service or the dead-letter topic.
 */
export function createDeliverer(ctx: ServiceContext, options: DelivererOptions) {
  return defineService(ctx, async (life): Promise<{ port: number }> => {
    const initial = ctx.config.current;
    const { kafka, admin } = await life.kafka();

    // Side records (one attempt record per request, retries, dead letters) are encoded by kafkajs
    // in a producer thread: the largest Kafka cost of a delivery then runs beside the HTTP work.
    // Under load they leave at most once per interval, so each request carries hundreds of records.
    const producer = await life.producerThread(1);
    const sink = new RecordBatcher(producer, {
      lingerMs: PRODUCE_LINGER_MS,
      sendIntervalMs: options.sideRecordIntervalMs ?? PRODUCE_INTERVAL_MS,
      logger: ctx.logger,
      registry: ctx.registry,
    });
    life.add({ name: 'side records', stop: () => sink.flushThenClose() });
    const metrics = new DelivererMetrics(ctx.registry);
    const gates = new EndpointGates(ctx.logger);
    const isolation = new IsolationMetrics(ctx.registry, gates);

    let policy = addressPolicy(initial);
    const client =
      options.webhookClient ??
      (options.webhookThread !== false && !options.lookup
        ? new WebhookThread(webhookThreadSettings(initial))
        : new UndiciWebhookClient({
            settings: () => poolSettings(ctx.config.current),
            policy: () => policy,
            ...(options.lookup && { lookup: options.lookup }),
          }));
    life.add({
      name: 'webhook client',
      stop: () => client.close(),
      ...(client instanceof WebhookThread && { fatal: client.died }),
    });
    // Destination health; its operator events go through the same client as every webhook.
    const watch = new DestinationHealth({
      config: () => ctx.config.current,
      sink,
      client,
      metrics,
      logger: ctx.logger,
      now: options.now ?? Date.now,
      ...(options.operatorBackoffMs && { backoffMs: options.operatorBackoffMs }),
    });
    await life.start({ name: 'operator events', stop: () => watch.stop() }, () =>
      watch.start(kafka, `${delivererGroupId(initial)}.${OPERATOR_GROUP_SUFFIX}`),
    );
    // Everything a reload needs is built before the new config is swapped in: a policy that
    // cannot be built refuses the reload, and the running policy and thread stay as they are.
    const stopReloading = ctx.config.onReload((config: SluiceConfig) => {
      const nextPolicy = addressPolicy(config);
      const threadSettings = webhookThreadSettings(config);
      return () => {
        gates.retain(config);
        watch.retain(config);
        if (client instanceof UndiciWebhookClient) {
          policy = nextPolicy;
          void client.retain(endpointOrigins(config));
        } else if (client instanceof WebhookThread) client.update(threadSettings);
      };
    });
    life.add({ name: 'config reload step', stop: stopReloading });

    const config = () => ctx.config.current;
    // The destinations' runtime states, read whole before any event is handled: a restart during
    // a pause stays paused.
    const states = await startDestinationStateReader(kafka, initial.kafka.topics.destinationState, ctx.logger, {
      groupPrefix: `${delivererGroupId(initial)}.destination-state`,
      retry: life.startup,
    });
    life.add({ name: 'destination state', stop: () => states.close(), ready: { kafka: () => states.connected } });
    metrics.readStateAppliedFrom(() => states.applied());
    await states.ready;
    const parking = new Parking({
      config,
      view: states.view,
      sink,
      admin,
      groupId: parkedGroupId(initial),
      metrics,
      logger: ctx.logger,
      now: Date.now,
      ...(options.parkCheckIntervalMs !== undefined && { checkEveryMs: options.parkCheckIntervalMs }),
    });
    life.add({ name: 'parking', stopIntake: () => parking.close(), stop: () => parking.close() });

    const timeouts = new TimeoutLog({ logger: ctx.logger });
    const consumers: ConcurrentConsumer[] = [];
    const delivery = new Delivery({
      config,
      client,
      sink,
      metrics,
      logger: ctx.logger,
      gates,
      isolation,
      onTimeout: (t) => timeouts.timedOut(t),
      crowded: () => consumers.some((c) => c.crowded),
      watch,
      ...(ctx.tracing && { tracing: ctx.tracing }),
    });
    // Requests still in flight after their destination was done write their attempt records first.
    life.add({ name: 'deliveries', stop: () => delivery.drain() });
    metrics.readInFlightFrom(() => delivery.inFlight());
    const ordering = await startOrdering(ctx, life, {
      kafka,
      admin,
      sink,
      metrics,
      delivery,
      ...(options.waitingTrimIntervalMs !== undefined && { trimEveryMs: options.waitingTrimIntervalMs }),
    });
    const topics = {
      events: initial.kafka.topics.events,
      redeliver: initial.kafka.topics.redeliver,
      waiting: ordering ? Ordering.topics(initial) : [],
    };
    const lag = new ConsumerMetrics(ctx.registry, {
      admin,
      logger: ctx.logger,
      ...(options.lagIntervalMs !== undefined && { intervalMs: options.lagIntervalMs }),
    });
    life.add({ name: 'consumer lag', stop: () => lag.close() });
    const handlerDeps: RecordHandlerDeps = {
      config,
      topics,
      codec:
        options.codec ??
        createEnvelopeCodec({
          schemaRegistryUrl: ctx.env.schemaRegistryUrl,
          access: initial.schemaRegistry,
          topic: topics.events,
        }),
      delivery,
      sink,
      metrics,
      logger: ctx.logger,
      parking,
      watch,
      ...(ordering && { ordering: ordering.ordering }),
    };
    // Partition p of every topic this process reads goes to one process (per-user order's owner).
    const processId = randomUUID();
    const consumerBase = {
      kafka,
      maxInFlightPerPartition: initial.delivery.maxInFlightPerPartition,
      onCrowded: () => delivery.judgeSoon(),
      logger: ctx.logger,
      metrics: lag,
      partitionAssigners: [copartitionedAssigner(processId)],
    };
    consumers.push(
      new ConcurrentConsumer({
        ...consumerBase,
        groupId: delivererGroupId(initial),
        topics: [topics.events, topics.redeliver, ...topics.waiting],
        handle: createRecordHandler(handlerDeps),
        ...(ordering && {
          onAssigned: (a: Record<string, number[]>) => ordering.store.assigned(a[topics.events] ?? []),
        }),
      }),
    );
    if (parking.topics().length > 0) {
      // One group over every destination's parked topic, each read only while its destination is active.
      const parked = new ConcurrentConsumer({
        ...consumerBase,
        groupId: parkedGroupId(initial),
        topics: parking.topics(),
        handle: createParkedHandler(handlerDeps),
      });
      consumers.push(parked);
      // Before any record is handled: which parked topics to hold, which hold records to drain first.
      await parking.start(parked);
    }
    await life.consumers(consumers, {
      ...(options.drainTimeoutMs !== undefined && { drainTimeoutMs: options.drainTimeoutMs }),
    });

    const http = await life.http({ port: options.port });
    return { port: http.port };
  });
}

/**
 * Per-user order (docs/reference/ordering.md), when a destination asks for it at start: the users'
 * queues read whole from `sluice.ordering` before any event is handled.
 */
async function startOrdering(
  ctx: ServiceContext,
  life: ServiceLifecycle,
  parts: Pick<OrderingStoreDeps, 'kafka' | 'admin' | 'sink'> & {
    metrics: DelivererMetrics;
    delivery: Delivery;
    trimEveryMs?: number;
  },
): Promise<{ store: OrderingStore; ordering: Ordering } | undefined> {
  const initial = ctx.config.current;
  if (Ordering.topics(initial).length === 0) return undefined;
  const states = new QueueStates(initial.delivery.orderingStateBytes);
  parts.metrics.readOrderingStateFrom(() => states.bytes);
  const store = new OrderingStore({
    ...parts,
    topic: () => ctx.config.current.kafka.topics.ordering,
    logger: ctx.logger,
    groupPrefix: `${delivererGroupId(initial)}.ordering`,
    retry: life.retryKafka,
    states,
    onWritten: (bytes) => parts.metrics.orderingStateWritten.inc(bytes),
  });
  await life.start({ name: 'ordering state', stop: () => store.close(), ready: { kafka: () => store.connected } }, () =>
    store.start(),
  );
  const ordering = new Ordering({
    config: () => ctx.config.current,
    sink: parts.sink,
    store,
    deadLetter: (job, dead) => parts.delivery.deadLetter(job, dead),
    metrics: parts.metrics,
    logger: ctx.logger,
    now: Date.now,
  });
  life.add({ name: 'ordering', stopIntake: () => ordering.close(), stop: () => ordering.close() });
  const stopTrim = startWaitingTrim({
    admin: parts.admin,
    groupId: delivererGroupId(initial),
    topics: Ordering.topics(initial),
    logger: ctx.logger,
    ...(parts.trimEveryMs !== undefined && { everyMs: parts.trimEveryMs }),
  });
  life.add({ name: 'waiting trim', stop: stopTrim });
  return { store, ordering };
}
