import type { ConsumedRecord, SequentialStep } from '@sluice/kafka';
import { eligibleAt } from '../domain/tiers.ts';
import type { RetryMetrics } from '../metrics.ts';
import { guardRecord } from './record-guard.ts';
import { readScheduled, type Router } from './router.ts';

export interface TierDeps {
  router: Router;
  tierMs: number;
  now: () => number;
}

/**
 * The decision of a delay tier about its head record: wait (partition paused, offset unresolved)
 * until its span is over, or move it on. The exact due time is checked on every read — a restarted
 * consumer forgot its pauses, so the check never relies on them.
 */
export function createTierStep(deps: TierDeps): (record: ConsumedRecord) => SequentialStep {
  return (record) => {
    const read = readScheduled(record);
    if (!read.ok) return { kind: 'go', run: () => deps.router.reject(record, read.error) };
    const until = eligibleAt(record.timestamp, deps.tierMs, read.dueAt);
    if (deps.now() < until) return { kind: 'wait', untilMs: until };
    return {
      kind: 'go',
      run: () => guardRecord(record, deps.router, () => deps.router.route(record, read.state, read.dueAt, deps.tierMs)),
    };
  };
}

export interface FinalTierDeps extends TierDeps {
  /** Longest stay per pass (`finalHoldMs`). */
  holdMs: number;
  metrics: RetryMetrics;
  /** Resolves when the service stops taking work: held records are handed back. */
  stopping: Promise<void>;
}

/**
 * Handler of the shortest tier (the final approach), whose records wait different spans, up to
 * `holdMs`: a paused head would hold back records due before it, so each record waits on its own
 * timer instead, in a `ConcurrentConsumer` that commits only below the lowest record still
 * held. On shutdown, held records are written back to the tier (acknowledged) before their
 * offsets are released, so nothing is lost and nothing leaves early.
 */
export function createFinalTierHandler(deps: FinalTierDeps): (record: ConsumedRecord) => Promise<void> {
  const hold = async (record: ConsumedRecord) => {
    const read = readScheduled(record);
    if (!read.ok) return deps.router.reject(record, read.error);
    const until = eligibleAt(record.timestamp, deps.holdMs, read.dueAt);
    deps.metrics.held.inc();
    let reached: boolean;
    try {
      reached = await waitUntil(until, deps.now, deps.stopping);
    } finally {
      deps.metrics.held.dec();
    }
    if (!reached) return deps.router.requeue(deps.tierMs, record, read.state, read.dueAt);
    await deps.router.route(record, read.state, read.dueAt, deps.tierMs);
  };
  return (record) => guardRecord(record, deps.router, () => hold(record));
}

/** Resolves true once `now() >= at` (timers may fire a little early: re-check), false if stopped first. */
async function waitUntil(at: number, now: () => number, stopping: Promise<void>): Promise<boolean> {
  let stopped = false;
  void stopping.then(() => (stopped = true));
  while (!stopped && now() < at) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(1, at - now())))),
      stopping,
    ]);
    clearTimeout(timer);
  }
  return now() >= at;
}
