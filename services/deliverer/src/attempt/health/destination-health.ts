import type { SluiceConfig } from '@sluice/config';
import type { Kafka, RecordSink } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import type { FilterVerdict, FilterWatch } from '../../intake/filter-routed.ts';
import { delivererGroupId } from '../../service/config.ts';
import { OPERATOR_GROUP_SUFFIX } from '../../service/constants.ts';
import type { DelivererMetrics } from '../../service/metrics.ts';
import type { StartContext } from '../../service/options.ts';
import type { AttemptResult } from '../../transport/attempt-result.ts';
import type { WebhookClient } from '../../transport/webhook-client.ts';
import type { OutcomeWatch } from '../settle.ts';
import { ActionsRelay } from './actions-relay.ts';
import { AutoDisable } from './auto-disable.ts';
import { OperatorOutbox } from './operator-outbox.ts';
import { OperatorSignals } from './operator-signals.ts';

export interface DestinationHealthDeps {
  config: () => SluiceConfig;
  /** The side-record sink: auto-disable's state and action records, the operator events' attempt records. */
  sink: RecordSink;
  /** The deliverer's webhook client, which every operator event is sent through. */
  client: WebhookClient;
  metrics: DelivererMetrics;
  logger: Logger;
  now: () => number;
  /** Waits before each retry of an operator event (tests shrink them). */
  backoffMs?: readonly number[];
}

/**
 * Destination health (docs/deliverer.md, "Auto-disable and operator events"): told of every attempt
 * result and dead letter by the settling (`OutcomeWatch`) and of every filter verdict by the
 * intake (`FilterWatch`). Its parts: auto-disable, the signals (dead-letter bursts, a filter
 * refusing all, expiring secrets), the relay of `sluice.destination-actions`, and the outbox that
 * sends their operator events through the deliverer's webhook client.
 */
export class DestinationHealth implements OutcomeWatch, FilterWatch {
  readonly outbox: OperatorOutbox;
  readonly signals: OperatorSignals;
  readonly relay: ActionsRelay;
  readonly #autoDisable: AutoDisable;

  constructor(deps: DestinationHealthDeps) {
    this.outbox = new OperatorOutbox({
      config: deps.config,
      client: deps.client,
      sink: deps.sink,
      logger: deps.logger,
      now: deps.now,
      counted: (type, outcome) => deps.metrics.operatorEvents.inc({ type, outcome }),
      ...(deps.backoffMs && { backoffMs: deps.backoffMs }),
    });
    const tell = this.outbox.send;
    this.#autoDisable = new AutoDisable({ ...deps, tell });
    this.signals = new OperatorSignals({ config: deps.config, now: deps.now, tell });
    this.relay = new ActionsRelay({ config: deps.config, logger: deps.logger, tell });
  }

  /** Starts the secret-expiry check and the relay of the actions topic (group `<clientId>.deliverer.operator-events`). */
  async start(kafka: Kafka, groupId: string): Promise<void> {
    this.signals.start();
    await this.relay.start(kafka, groupId);
  }

  async stop(): Promise<void> {
    this.signals.stop();
    await this.relay.stop();
    await this.outbox.close();
  }

  attempted(destinationId: string, result: AttemptResult): void {
    this.#autoDisable.attempted(destinationId, result);
  }

  deadLettered(destinationId: string): void {
    this.signals.deadLettered(destinationId);
  }

  filtered(verdict: FilterVerdict): void {
    this.signals.filtered(verdict);
  }

  /** Drops the counts of endpoints no longer configured (after a reload). */
  retain(config: SluiceConfig): void {
    this.#autoDisable.retain(config);
  }
}

/** Destination health started beside the deliveries it watches; its operator events go through `parts.client`. */
export async function startDestinationHealth(
  start: StartContext,
  parts: Pick<DestinationHealthDeps, 'sink' | 'client' | 'metrics'>,
): Promise<DestinationHealth> {
  const { ctx, life, options } = start;
  const health = new DestinationHealth({
    ...parts,
    config: () => ctx.config.current,
    logger: ctx.logger,
    now: options.now ?? Date.now,
    ...(options.operatorBackoffMs && { backoffMs: options.operatorBackoffMs }),
  });
  await life.start({ name: 'operator events', stop: () => health.stop() }, () =>
    health.start(start.kafka, `${delivererGroupId(ctx.config.current)}.${OPERATOR_GROUP_SUFFIX}`),
  );
  return health;
}
