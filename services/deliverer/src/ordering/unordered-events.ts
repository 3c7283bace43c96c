import type { Logger } from '@sluice/logging';
import { ORDERING_UNORDERED_LOG_INTERVAL_MS } from '../service/constants.ts';
import { LogRateLimiter } from '../service/log-rate-limit.ts';
import type { DelivererMetrics } from '../service/metrics.ts';

/** The events not held in order because the ordering state's memory budget is spent: counted, and a rate-limited warning per destination. */
export class UnorderedEvents {
  readonly #log: LogRateLimiter;
  readonly #deps: { metrics: Pick<DelivererMetrics, 'orderingUnordered'>; logger: Logger };
  constructor(deps: { metrics: Pick<DelivererMetrics, 'orderingUnordered'>; logger: Logger; now: () => number }) {
    this.#deps = deps;
    this.#log = new LogRateLimiter({ intervalMs: ORDERING_UNORDERED_LOG_INTERVAL_MS, now: deps.now });
  }

  /** An event of `key` for `destinationId` not held in order (`delivery.orderingStateBytes` spent). */
  count(destinationId: string, key: string): void {
    this.#deps.metrics.orderingUnordered.inc({ destination: destinationId });
    const admitted = this.#log.admit(destinationId);
    if (admitted.write)
      this.#deps.logger.warn(
        { destinationId, key, suppressed: admitted.suppressed },
        'ordering state memory budget spent (delivery.orderingStateBytes): event not held in order',
      );
  }
}
