import type { SluiceConfig } from '@sluice/config';
import { createGroupConsumer, type GroupConsumer, type Kafka, type RecordSink } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { AUTO_ACTOR, SECRET_CHECK_INTERVAL_MS } from '../../service/constants.ts';
import {
  actionRecord,
  appendDestinationAction,
  newActionId,
  stateKey,
  stateOf,
  writeDestinationState,
} from '@sluice/destination-state';
import { OperatorSender } from './operator-sender.ts';
import type { AttemptResult } from '../../transport/attempt-result.ts';
import { AutoDisableTracker } from './auto-disable.ts';
import { DeadLetterBursts, expiringKeys, type OperatorEvent, RefusalStreaks } from './operator-signals.ts';
import type { DelivererMetrics } from '../../service/metrics.ts';
import { INVALID_REQUEST_CODE } from '../../transport/transport-errors.ts';

export interface OperatorWatchDeps {
  config: () => SluiceConfig;
  sink: RecordSink;
  metrics: DelivererMetrics;
  logger: Logger;
  now: () => number;
  /** Waits before each retry of an operator event (tests shrink them). */
  backoffMs?: readonly number[];
}

/** What the deliveries tell the watch: every attempt result, every dead letter, every filter verdict. */
export interface DeliveryWatch {
  attempted(destinationId: string, result: AttemptResult): void;
  deadLettered(destinationId: string): void;
  /** Called by the destination filter with each event it judged (refused or let through). */
  filtered(destinationId: string, refused: boolean): void;
}

const PAST: Record<string, 'paused' | 'resumed' | 'disabled' | 'enabled'> = {
  pause: 'paused',
  resume: 'resumed',
  disable: 'disabled',
  enable: 'enabled',
};

/**
 * The facts an operator is told of (docs/reference/operator-events.md), seen by the deliverer:
 * auto-disable of an endpoint with no 2xx for `delivery.autoDisable.after` (written to the
 * destination-state topic, logged, counted), dead-letter bursts, a filter refusing every event,
 * signing secrets about to expire, and every action of `sluice.destination-actions` (read by one
 * replica of the deliverer through a shared group), each sent as an operator event.
 */
export class OperatorWatch implements DeliveryWatch {
  readonly #deps: OperatorWatchDeps;
  readonly #tracker = new AutoDisableTracker();
  readonly #bursts = new DeadLetterBursts();
  readonly #refusals = new RefusalStreaks();
  readonly #expiryTold = new Set<string>();
  readonly sender: OperatorSender;
  #timer: NodeJS.Timeout | undefined;
  #consumer: GroupConsumer | undefined;

  constructor(deps: OperatorWatchDeps) {
    this.#deps = deps;
    this.sender = new OperatorSender({
      settings: () => deps.config().operatorEvents,
      timeoutMs: () => deps.config().delivery.timeoutMs,
      logger: deps.logger,
      now: deps.now,
      counted: (type, outcome) => deps.metrics.operatorEvents.inc({ type, outcome }),
      ...(deps.backoffMs && { backoffMs: deps.backoffMs }),
    });
  }

  /** Starts the secret-expiry check and the consumer of the actions topic (group `<clientId>.deliverer.operator-events`). */
  async start(kafka: Kafka, groupId: string): Promise<void> {
    this.checkSecrets();
    this.#timer = setInterval(() => this.checkSecrets(), SECRET_CHECK_INTERVAL_MS);
    this.#timer.unref();
    // Run again after a Kafka error (a broker restart) like every Sluice consumer; never fatal.
    const consumer = createGroupConsumer(kafka, { groupId, logger: this.#deps.logger, maxWaitTimeInMs: 500 });
    this.#consumer = consumer;
    await consumer.run(
      { topics: [this.#deps.config().kafka.topics.destinationActions], fromBeginning: false },
      { eachMessage: async ({ message }) => this.onActionRecord(message.value) },
    );
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#consumer?.disconnect();
    await this.sender.close();
  }

  attempted(destinationId: string, result: AttemptResult): void {
    // A request that could not be built never reached the endpoint: no evidence against it.
    if (result.error === INVALID_REQUEST_CODE) return;
    const config = this.#deps.config();
    const disabling = this.#tracker.observe(
      destinationId,
      result.endpoint,
      result.outcome === 'success',
      result.at,
      result.error ?? (result.status !== undefined ? `http_${result.status}` : 'unknown'),
      config.delivery.autoDisable.afterMs,
    );
    if (disabling === undefined) return;
    const at = new Date(this.#deps.now()).toISOString();
    const reason = `no 2xx since ${new Date(disabling.failingSince).toISOString()}; last error: ${disabling.lastError}`;
    this.#deps.metrics.autoDisabled.inc({ destination: destinationId });
    this.#deps.logger.warn(
      {
        destinationId,
        endpoint: result.endpoint,
        failingSince: disabling.failingSince,
        lastError: disabling.lastError,
      },
      'endpoint auto-disabled',
    );
    // Told here, where the fact is seen: the actions consumer skips the auto-disable records.
    this.sender.send(
      { type: 'endpoint.disabled', destinationId, endpointRef: result.endpoint, reason, by: AUTO_ACTOR, auto: true },
      at,
    );
    const t = config.kafka.topics;
    const endpointRef = result.endpoint;
    const record = actionRecord('disable', destinationId, endpointRef, {
      reason,
      by: AUTO_ACTOR,
      at,
      auto: true,
      id: newActionId(),
    });
    void Promise.all([
      writeDestinationState(this.#deps.sink, t.destinationState, stateKey(destinationId, endpointRef), stateOf(record)),
      appendDestinationAction(this.#deps.sink, t.destinationActions, record),
    ]).catch((err: unknown) => this.#deps.logger.error({ err, destinationId }, 'auto-disable not written'));
  }

  deadLettered(destinationId: string): void {
    const settings = this.#deps.config().operatorEvents;
    if (settings === undefined) return;
    const count = this.#bursts.add(destinationId, this.#deps.now(), settings.deadLetterBurst);
    if (count !== undefined)
      this.sender.send({
        type: 'destination.dead_letter_burst',
        destinationId,
        deadLetters: count,
        windowSeconds: this.#bursts.windowSeconds,
      });
  }

  filtered(destinationId: string, refused: boolean): void {
    const settings = this.#deps.config().operatorEvents;
    if (settings === undefined) return;
    if (this.#refusals.verdict(destinationId, refused, settings.filterRefusesAll))
      this.sender.send({ type: 'destination.filter_refuses_all', destinationId, refused: settings.filterRefusesAll });
  }

  /** Drops the counts of endpoints no longer configured (after a reload). */
  retain(config: SluiceConfig): void {
    this.#tracker.retain((d, e) => config.destinations.some((x) => x.id === d && x.endpoints.some((y) => y.ref === e)));
  }

  /** Sends `signing_secret.expiring` for each key newly within the notice (run at start and every 15 minutes). */
  checkSecrets(): void {
    const config = this.#deps.config();
    const settings = config.operatorEvents;
    if (settings === undefined) return;
    for (const event of expiringKeys(config, this.#deps.now(), settings.secretExpiryNoticeMs)) {
      const key = `${event.destinationId}/${event.scheme}/${event.index}/${event.notAfter}`;
      if (this.#expiryTold.has(key)) continue;
      this.#expiryTold.add(key);
      this.sender.send(event);
    }
  }

  /** One record of `sluice.destination-actions` → its operator event (auto-disable's are told where they happen). */
  onActionRecord(value: Buffer | null): void {
    let record: {
      action?: string;
      destinationId?: string;
      endpointRef?: string;
      reason?: string;
      by?: string;
      at?: string;
      auto?: true;
    };
    try {
      record = JSON.parse(value?.toString('utf8') ?? 'null') ?? {};
    } catch {
      return;
    }
    const past =
      typeof record.action === 'string' && Object.hasOwn(PAST, record.action) ? PAST[record.action] : undefined;
    if (past === undefined || typeof record.destinationId !== 'string' || record.auto === true) return;
    const event: OperatorEvent = {
      type: `${record.endpointRef === undefined ? 'destination' : 'endpoint'}.${past}`,
      destinationId: record.destinationId,
      ...(record.endpointRef !== undefined && { endpointRef: record.endpointRef }),
      reason: String(record.reason ?? ''),
      by: String(record.by ?? ''),
    };
    this.sender.send(event, typeof record.at === 'string' ? record.at : undefined);
  }
}
