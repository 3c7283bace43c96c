import type { SluiceConfig } from '@sluice/config';
import {
  actionRecord,
  AUTO_TOKEN_ID,
  appendDestinationAction,
  newActionId,
  stateKey,
  stateOf,
  writeDestinationState,
} from '@sluice/destination-state';
import type { RecordSink } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import type { AttemptResult } from '../../transport/attempt-result.ts';
import { INVALID_REQUEST_CODE } from '@sluice/webhook';
import { AUTO_ACTOR } from '../../service/constants.ts';
import type { DelivererMetrics } from '../../service/metrics.ts';
import type { TellOperator } from './operator-signals.ts';

/** Why an endpoint is disabled: since when no attempt got a 2xx, and the last error. */
export interface Disabling {
  destinationId: string;
  endpoint: string;
  failingSince: number;
  lastError: string;
}

/** One attempt as auto-disable counts it. */
export interface ObservedAttempt {
  destinationId: string;
  endpoint: string;
  /** When it started. */
  at: number;
  /** Why it got no 2xx; absent when it got one. */
  error?: string;
}

/**
 * Auto-disable (docs/reference/destination-actions.md): per endpoint, the time of the first attempt
 * without a 2xx since its last 2xx. An attempt that finds that time `afterMs` or more behind it
 * disables the endpoint; the endpoint then starts a new count, so after it is enabled again it has
 * the whole time anew. Only attempts count: an endpoint with nothing to send is never disabled.
 */
export class AutoDisableTracker {
  readonly #failing = new Map<string, { since: number; lastError: string }>();

  /** Records one attempt's result; returns the disabling it leads to, if any. */
  observe(attempt: ObservedAttempt, afterMs: number): Disabling | undefined {
    const { destinationId, endpoint, at, error } = attempt;
    const key = `${destinationId}\u0000${endpoint}`;
    if (error === undefined) {
      this.#failing.delete(key);
      return undefined;
    }
    let entry = this.#failing.get(key);
    if (entry === undefined) {
      entry = { since: at, lastError: error };
      this.#failing.set(key, entry);
    }
    entry.lastError = error;
    if (afterMs <= 0 || at - entry.since < afterMs) return undefined;
    this.#failing.delete(key);
    return { destinationId, endpoint, failingSince: entry.since, lastError: entry.lastError };
  }

  /** Forgets endpoints no longer configured. */
  retain(keep: (endpoint: { destinationId: string; endpoint: string }) => boolean): void {
    for (const key of this.#failing.keys()) {
      const [destinationId, endpoint] = key.split('\u0000') as [string, string];
      if (!keep({ destinationId, endpoint })) this.#failing.delete(key);
    }
  }
}

export interface AutoDisableDeps {
  config: () => SluiceConfig;
  /** Where the disabling goes: `sluice.destination-state` and `sluice.destination-actions`. */
  sink: RecordSink;
  metrics: DelivererMetrics;
  logger: Logger;
  now: () => number;
  /** Queues the `endpoint.disabled` operator event. */
  tell: TellOperator;
}

/**
 * Auto-disable of an endpoint with no 2xx for `delivery.autoDisable.after`, from the attempt
 * results: a map lookup per attempt, no I/O; a disabling is written to the destination-state and
 * actions topics (through the side-record sink), logged, counted and told to the operator.
 */
export class AutoDisable {
  readonly #tracker = new AutoDisableTracker();
  readonly #deps: AutoDisableDeps;

  constructor(deps: AutoDisableDeps) {
    this.#deps = deps;
  }

  attempted(destinationId: string, result: AttemptResult): void {
    // A request that could not be built never reached the endpoint: no evidence against it.
    if (result.error === INVALID_REQUEST_CODE) return;
    const config = this.#deps.config();
    const observed: ObservedAttempt = { destinationId, endpoint: result.endpoint, at: result.at };
    if (result.outcome !== 'success')
      observed.error = result.error ?? (result.status !== undefined ? `http_${result.status}` : 'unknown');
    const disabling = this.#tracker.observe(observed, config.delivery.autoDisable.afterMs);
    if (disabling !== undefined) this.#disable(disabling, config);
  }

  /** Drops the counts of endpoints no longer configured (after a reload). */
  retain(config: SluiceConfig): void {
    this.#tracker.retain((k) =>
      config.destinations.some((d) => d.id === k.destinationId && d.endpoints.some((e) => e.ref === k.endpoint)),
    );
  }

  #disable(disabling: Disabling, config: SluiceConfig): void {
    const { destinationId, endpoint: endpointRef } = disabling;
    const at = new Date(this.#deps.now()).toISOString();
    const reason = `no 2xx since ${new Date(disabling.failingSince).toISOString()}; last error: ${disabling.lastError}`;
    this.#deps.metrics.autoDisabled.inc({ destination: destinationId });
    this.#deps.logger.warn(
      { destinationId, endpoint: endpointRef, failingSince: disabling.failingSince, lastError: disabling.lastError },
      'endpoint auto-disabled',
    );
    // Told here, where the fact is seen: the actions relay skips the auto-disable records.
    this.#deps.tell(
      {
        type: 'endpoint.disabled',
        destinationId,
        endpointRef,
        reason,
        by: AUTO_ACTOR,
        byTokenId: AUTO_TOKEN_ID,
        auto: true,
      },
      at,
    );
    const t = config.kafka.topics;
    const record = actionRecord('disable', destinationId, endpointRef, {
      reason,
      by: AUTO_ACTOR,
      byTokenId: AUTO_TOKEN_ID,
      at,
      auto: true,
      id: newActionId(),
    });
    void Promise.all([
      writeDestinationState(this.#deps.sink, t.destinationState, stateKey(destinationId, endpointRef), stateOf(record)),
      appendDestinationAction(this.#deps.sink, t.destinationActions, record),
    ]).catch((err: unknown) => this.#deps.logger.error({ err, destinationId }, 'auto-disable not written'));
  }
}
