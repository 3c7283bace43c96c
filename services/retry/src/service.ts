import { ConcurrentConsumer, ConsumerMetrics, RecordBatcher, SafeProducer, SequentialConsumer } from '@sluice/kafka';
import { defineService, type RunningService, type ServiceContext, startRuntimeDestinations } from '@sluice/service-kit';
import { createIntakeHandler } from './adapters/intake.ts';
import { Router } from './adapters/router.ts';
import { createFinalTierHandler, createTierStep } from './adapters/tier-handlers.ts';
import { intakeGroupId, retrySettings, tierGroupId } from './config.ts';
import { FINAL_TIER_MAX_HELD_PER_PARTITION, HOP_ALLOWANCE_MS, INTAKE_IN_FLIGHT_PER_PARTITION } from './constants.ts';
import { finalHoldMs, tierFetchWaitMs } from './domain/tiers.ts';
import { RetryMetrics } from './metrics.ts';

export interface RetryOptions {
  /** Port of /metrics, /healthz and /readyz (0 picks a free one). */
  port: number;
  /** Injected for tests; default `Date.now`. */
  now?: () => number;
  /** Injected for tests; default `Math.random`. */
  random?: () => number;
  /** Interval of the consumer lag and tier backlog reads; default 10 s. */
  lagIntervalMs?: number;
}

export interface RetryService extends RunningService {
  port: number;
}

/**
 * The retry service (docs/reference/retries.md): `sluice.retry` → delay tiers → `sluice.redeliver`, or
 * `sluice.dead-letter` once the window is spent. The tier set is fixed at start (each tier has
 * its own consumer); window, schedule and jitter are read per record, so reloads apply.
 */
export function createRetry(ctx: ServiceContext, options: RetryOptions) {
  return defineService(ctx, async (life): Promise<{ port: number }> => {
    const now = options.now ?? Date.now;
    const random = options.random ?? Math.random;
    const initial = ctx.config.current;
    const { tiersMs, tierTopic } = retrySettings(initial);
    const logger = ctx.logger;
    const { kafka, admin } = await life.kafka();
    // Whether a destination is ordered or gone (a dead letter's reason and release marker) is asked of
    // runtime destinations too.
    await startRuntimeDestinations({ ctx, life, kafka });

    const metrics = new RetryMetrics(ctx.registry);
    // The intake's lag means the retry service falls behind; a delay tier's backlog is records
    // waiting on purpose until due (sluice_retry_backlog), so the lag alert never sees it.
    const lagSettings = {
      admin,
      logger,
      ...(options.lagIntervalMs !== undefined && { intervalMs: options.lagIntervalMs }),
    };
    const intakeLag = new ConsumerMetrics(ctx.registry, lagSettings);
    const tierBacklog = new ConsumerMetrics(ctx.registry, { ...lagSettings, metric: 'sluice_retry_backlog' });
    life.add({ name: 'consumer lag', stop: () => (intakeLag.close(), tierBacklog.close()) });
    const producer = await life.producer(new SafeProducer(kafka));
    // Forwards and dead letters leave in batches; one Kafka does not take is tried again until
    // written, so a broker outage is waited out (offsets stay uncommitted meanwhile).
    const sink = new RecordBatcher(producer, { lingerMs: 0, logger, registry: ctx.registry });
    life.add({ name: 'forwards', stop: () => sink.flushThenClose() });
    const router = new Router({
      sink,
      metrics,
      logger,
      tiersMs,
      tierTopic,
      now,
      topics: () => ctx.config.current.kafka.topics,
      destination: (id) => {
        const found = ctx.config.current.destinations.find((d) => d.id === id);
        return found && { ordered: found.ordering !== undefined };
      },
    });

    const intake = new ConcurrentConsumer({
      kafka,
      logger,
      metrics: intakeLag,
      groupId: intakeGroupId(initial),
      topics: [initial.kafka.topics.retry],
      maxInFlightPerPartition: INTAKE_IN_FLIGHT_PER_PARTITION,
      handle: createIntakeHandler({
        router,
        now,
        random,
        backoff: () => retrySettings(ctx.config.current),
        ...(ctx.tracing && { tracing: ctx.tracing }),
      }),
    });

    const [finalTierMs, ...longerTiers] = tiersMs as [number, ...number[]];
    let stop!: () => void;
    const stopping = new Promise<void>((resolve) => (stop = resolve));
    // When the service stops taking work, the final tier writes its held records back to the tier at once.
    life.add({ name: 'final tier holds', stopIntake: stop });
    const finalTier = new ConcurrentConsumer({
      kafka,
      logger,
      metrics: tierBacklog,
      groupId: tierGroupId(initial, finalTierMs),
      topics: [tierTopic(finalTierMs)],
      maxInFlightPerPartition: FINAL_TIER_MAX_HELD_PER_PARTITION,
      handle: createFinalTierHandler({
        router,
        metrics,
        now,
        tierMs: finalTierMs,
        holdMs: finalHoldMs(tiersMs, HOP_ALLOWANCE_MS),
        stopping,
      }),
    });
    const tiers = longerTiers.map(
      (tierMs) =>
        new SequentialConsumer({
          kafka,
          logger,
          metrics: tierBacklog,
          now,
          maxWaitTimeInMs: tierFetchWaitMs(tierMs),
          groupId: tierGroupId(initial, tierMs),
          topics: [tierTopic(tierMs)],
          step: createTierStep({ router, now, tierMs }),
        }),
    );
    const consumers = [intake, finalTier, ...tiers];
    await life.consumers(consumers);

    const http = await life.http({ port: options.port });
    logger.info({ tiersMs, groups: consumers.length }, 'retry service consuming');
    return { port: http.port };
  });
}
