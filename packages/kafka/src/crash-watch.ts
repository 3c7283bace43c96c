/**
 * What a consumer crash means, decided in one place for every Sluice consumer.
 *
 * kafkajs crashes a consumer for errors it could not retry away, and for some it would not even
 * restart the consumer: during a broker stop its coordinator lookup gives up on a refused
 * connection and throws the non-retriable `KafkaJSGroupCoordinatorNotFound`. Exiting on those
 * would turn every broker restart or leader move into a process restart, so Sluice consumers take
 * the decision away from kafkajs (`restartOnFailure` answers no) and make it here:
 * - a record handler failure (a bug in Sluice's own record handling) is fatal: the process exits
 *   and an orchestrator restarts it, instead of idling with a healthy face;
 * - any other crash came from the Kafka client (connection, coordinator, group membership): the
 *   consumer is run again after a backoff, for as long as it takes, not ready meanwhile.
 */
export type CrashVerdict = 'fatal' | 'run-again';

export function crashVerdict(facts: { handlerFailed: boolean }): CrashVerdict {
  return facts.handlerFailed ? 'fatal' : 'run-again';
}

export interface RerunBackoff {
  /** First delay; default 1 s. */
  initialMs: number;
  /** Longest delay; default 10 s (how late a consumer may notice that the broker is back). */
  maxMs: number;
}

export const DEFAULT_RERUN_BACKOFF: RerunBackoff = { initialMs: 1_000, maxMs: 10_000 };

/** Backoff before the n-th consecutive re-run (n ≥ 1): doubling from `initialMs`, capped at `maxMs`. */
export function rerunDelayMs(attempt: number, backoff: RerunBackoff): number {
  const exp = Math.min(Math.max(attempt - 1, 0), 30);
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** exp);
}
