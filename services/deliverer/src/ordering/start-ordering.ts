import type { RecordSink } from '@sluice/kafka';
import type { Delivery } from '../attempt/delivery.ts';
import { delivererGroupId } from '../service/config.ts';
import type { DelivererMetrics } from '../service/metrics.ts';
import type { StartContext } from '../service/options.ts';
import { OrderingStore } from './ordering-store.ts';
import { Ordering } from './ordering.ts';
import { QueueStates } from './queue-states.ts';
import { startWaitingTrim } from './waiting-trim.ts';
import { WaitingTopics } from './waiting-topics.ts';

/** Per-user order as started: its queues' store, the ordering that runs them and the waiting topics. */
export interface StartedOrdering {
  store: OrderingStore;
  ordering: Ordering;
  waitingTopics: WaitingTopics;
}

/**
 * Per-user order (docs/reference/ordering.md), whatever the destinations at start (one may ask for
 * it at any time: a reload, a runtime destination created or changed): the users' queues read
 * whole from `sluice.ordering` before any event is handled, the waiting topics that exist listed
 * and those of the ordered destinations created, to be read from the start; a destination ordered
 * later gets its topic at that change.
 */
export async function startOrdering(
  start: StartContext,
  parts: { sink: RecordSink; metrics: DelivererMetrics; delivery: Pick<Delivery, 'deadLetter'> },
): Promise<StartedOrdering> {
  const { ctx, life, options, kafka, admin } = start;
  const initial = ctx.config.current;
  const waitingTopics = new WaitingTopics({ config: () => ctx.config.current, admin, logger: ctx.logger });
  await life.startup('list the waiting topics', () => waitingTopics.find());
  // The ordered destinations' topics, before the events group joins: read from its first generation.
  await life.startup('create the waiting topics of the ordered destinations', () => waitingTopics.createOrdered());
  const onChange = () => waitingTopics.createOrderedSoon();
  ctx.config.on('change', onChange);
  life.add({ name: 'waiting topics of ordered destinations', stop: () => void ctx.config.off('change', onChange) });
  const states = new QueueStates(initial.delivery.orderingStateBytes);
  parts.metrics.readOrderingStateFrom(() => states.bytes);
  const store = new OrderingStore({
    kafka,
    admin,
    sink: parts.sink,
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
    waitingTopics,
    sink: parts.sink,
    store,
    deadLetter: (job, dead) => parts.delivery.deadLetter(job, dead),
    metrics: parts.metrics,
    logger: ctx.logger,
    now: Date.now,
  });
  parts.metrics.readOrderingWaitsFrom(() => {
    const w = ordering.waits();
    return {
      flights: w.flights,
      held: w.held,
      turn_in_slot: w.turnInSlot,
      turn_in_memory: w.turnInMemory,
      idle: w.idle,
      chained: w.chained,
    };
  });
  parts.metrics.readOrderingLongestStepFrom(() => ordering.longestStep());
  life.add({ name: 'ordering', stopIntake: () => ordering.close(), stop: () => ordering.close() });
  const stopTrim = startWaitingTrim({
    admin,
    groupId: delivererGroupId(initial),
    topics: () => waitingTopics.names(),
    logger: ctx.logger,
    ...(options.waitingTrimIntervalMs !== undefined && { everyMs: options.waitingTrimIntervalMs }),
  });
  life.add({ name: 'waiting trim', stop: stopTrim });
  return { store, ordering, waitingTopics };
}
