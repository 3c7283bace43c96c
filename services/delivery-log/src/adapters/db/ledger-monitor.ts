import type { SluiceConfig } from '@sluice/config';
import type { Logger } from '@sluice/logging';
import { type DestinationRun, type LedgerCutoff, ledgerCutoff } from '../../domain/ledger.ts';
import type { DeliveryLogMetrics } from '../../metrics.ts';
import type { DestinationControl } from '../kafka/destination-control.ts';
import type { LogReader } from './read-store.ts';

/**
 * The live ledger's wiring (docs/delivery-log.md, "Ledger"): destination states, the cutoff, its
 * gauges. Its routes are in ../http/ledger-routes.ts.
 */

const stopped = (state: string | undefined) => state === 'paused' || state === 'disabled';

/**
 * Each configured destination as the ledger sees it: parked when it, or every one of its endpoints,
 * is paused or disabled (docs/reference/destination-states.md); last resumed at the newest `at` of
 * an `active` state record of it or its endpoints.
 */
export function destinationRuns(config: SluiceConfig, control: DestinationControl): DestinationRun[] {
  return config.destinations.map((d) => {
    const own = control.get(d.id);
    const endpoints = d.endpoints.map((e) => control.get(d.id, e.ref));
    const parked = stopped(own?.state) || (endpoints.length > 0 && endpoints.every((e) => stopped(e?.state)));
    const resumed = [own, ...endpoints]
      .filter((v) => v?.state === 'active')
      .map((v) => Date.parse(v!.at))
      .filter(Number.isFinite);
    return { destinationId: d.id, parked, ...(resumed.length > 0 && { resumedAt: Math.max(...resumed) }) };
  });
}

export interface LedgerDeps {
  store: LogReader;
  now: () => number;
  config: () => SluiceConfig;
  control: DestinationControl;
}

/** The cutoff now, from the config in force (`retry.window`, `deliveryLog.ledger.grace`) and the destinations' states. */
export function currentCutoff(deps: LedgerDeps): LedgerCutoff {
  const config = deps.config();
  return ledgerCutoff(
    deps.now(),
    { windowMs: config.retry.windowMs, graceMs: config.deliveryLog.ledger.graceMs },
    destinationRuns(config, deps.control),
  );
}

/**
 * Sets the ledger's gauges every `deliveryLog.ledger.interval` from the unsettled deliveries alone
 * (one statement over the partial index `deliveries_unsettled`), never per scrape. A failed run is
 * logged; the gauges keep their last values until the next one.
 */
export class LedgerMonitor {
  readonly #deps: LedgerDeps & { metrics: DeliveryLogMetrics; logger: Logger };
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  constructor(deps: LedgerDeps & { metrics: DeliveryLogMetrics; logger: Logger }) {
    this.#deps = deps;
  }

  start(): void {
    const tick = () => {
      this.#running = this.refresh()
        .catch((err: unknown) => this.#deps.logger.warn({ err }, 'ledger gauges not refreshed'))
        .finally(() => {
          this.#timer = setTimeout(tick, this.#deps.config().deliveryLog.ledger.intervalMs);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    await this.#running;
    clearTimeout(this.#timer);
  }

  /** Computes the gauges once. */
  async refresh(): Promise<void> {
    const { metrics } = this.#deps;
    const now = this.#deps.now();
    const gauges = await this.#deps.store.ledgerGauges(currentCutoff(this.#deps));
    // Reset and set in one synchronous step: a scrape sees the old figures or the new, and a
    // destination with nothing unsettled any more shows 0 rather than its last count.
    for (const g of [metrics.unaccounted, metrics.inFlight, metrics.parked, metrics.oldestUnsettled]) g.reset();
    const ids = new Set([...this.#deps.config().destinations.map((d) => d.id), ...gauges.map((g) => g.destinationId)]);
    for (const destination of ids) {
      const g = gauges.find((x) => x.destinationId === destination);
      metrics.unaccounted.set({ destination }, g?.unaccounted ?? 0);
      metrics.inFlight.set({ destination }, g?.inFlight ?? 0);
      metrics.parked.set({ destination }, g?.parked ?? 0);
      const oldest = g?.oldestUnsettledAt ?? null;
      metrics.oldestUnsettled.set({ destination }, oldest === null ? 0 : Math.max(0, (now - oldest) / 1000));
    }
  }
}
