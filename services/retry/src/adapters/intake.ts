import type { ConsumedRecord } from '@sluice/kafka';
import { nextAttempt, type BackoffSettings } from '../domain/backoff.ts';
import { guardRecord } from './record-guard.ts';
import { readState, type Router } from './router.ts';

export interface IntakeDeps {
  router: Router;
  /** Read per record so a config reload applies to the next retry. */
  backoff: () => BackoffSettings;
  now: () => number;
  random: () => number;
}

/**
 * Handles one record of `sluice.retry` (a failed delivery from the deliverer): computes its due
 * time and schedules it, or dead-letters it when no attempt may start any more. A record that
 * cannot be handled goes to `sluice.rejected` (`guardRecord`).
 */
export function createIntakeHandler(deps: IntakeDeps): (record: ConsumedRecord) => Promise<void> {
  const schedule = async (record: ConsumedRecord) => {
    const read = readState(record);
    if (!read.ok) return deps.router.reject(record, read.error);
    const { state } = read;
    if (state.endpoints.length === 0) return deps.router.deadLetter(record, state, 'no_endpoints');
    const decision = nextAttempt({ state, settings: deps.backoff(), now: deps.now(), random: deps.random });
    if (decision.kind === 'dead') return deps.router.deadLetter(record, state, decision.reason);
    await deps.router.route(record, state, decision.dueAt);
  };
  return (record) => guardRecord(record, deps.router, () => schedule(record));
}
