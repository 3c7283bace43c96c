import type { SluiceConfig } from '@sluice/config';
import { type DestinationAction, parseActionRecord } from '@sluice/destination-state';
import { createGroupConsumer, type GroupConsumer, type Kafka } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import type { OperatorEvent, TellOperator } from './operator-signals.ts';

export interface ActionsRelayDeps {
  config: () => SluiceConfig;
  logger: Logger;
  tell: TellOperator;
}

const PAST: Record<DestinationAction, 'paused' | 'resumed' | 'disabled' | 'enabled'> = {
  pause: 'paused',
  resume: 'resumed',
  disable: 'disabled',
  enable: 'enabled',
};

/**
 * Every operator's action of `sluice.destination-actions` as an operator event, read by one replica
 * of the deliverer through a group the replicas share (`<clientId>.deliverer.operator-events`).
 * Auto-disable's records are skipped: auto-disable tells its event where it happens.
 */
export class ActionsRelay {
  readonly #deps: ActionsRelayDeps;
  #consumer: GroupConsumer | undefined;

  constructor(deps: ActionsRelayDeps) {
    this.#deps = deps;
  }

  async start(kafka: Kafka, groupId: string): Promise<void> {
    // Run again after a Kafka error (a broker restart) like every Sluice consumer; never fatal.
    const consumer = createGroupConsumer(kafka, { groupId, logger: this.#deps.logger, maxWaitTimeInMs: 500 });
    this.#consumer = consumer;
    await consumer.run(
      { topics: [this.#deps.config().kafka.topics.destinationActions], fromBeginning: false },
      { eachMessage: async ({ message }) => this.record(message.value) },
    );
  }

  async stop(): Promise<void> {
    await this.#consumer?.disconnect();
  }

  /**
   * One record of `sluice.destination-actions` → its operator event, with the name and id of the
   * token that acted. Read by the topic's own parser: anything else is skipped.
   */
  record(value: Buffer | null): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value?.toString('utf8') ?? 'null');
    } catch {
      return;
    }
    const record = parseActionRecord(parsed);
    if (record === undefined || record.auto === true) return;
    const event: OperatorEvent = {
      type: `${record.endpointRef === undefined ? 'destination' : 'endpoint'}.${PAST[record.action]}`,
      destinationId: record.destinationId,
      ...(record.endpointRef !== undefined && { endpointRef: record.endpointRef }),
      reason: record.reason,
      by: record.by,
      ...(record.byTokenId !== undefined && { byTokenId: record.byTokenId }),
    };
    this.#deps.tell(event, record.at);
  }
}
