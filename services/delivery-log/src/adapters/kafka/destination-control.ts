import { randomBytes } from 'node:crypto';
import {
  actionRecord,
  DESTINATION_ACTIONS,
  DestinationActionWriter,
  type DestinationAction,
  type DestinationActionRecord,
  type DestinationStateReader,
  type DestinationStateValue,
  newActionId,
  parseActionRecord,
  startDestinationStateReader,
  stateKey,
  stateOf,
} from '@sluice/destination-state';
import { createGroupConsumer, type GroupConsumer, type Kafka, type RetryKafka } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { CONTROL_CATCH_UP_MS } from '../../constants.ts';
import type { Actor } from '../../domain/audit.ts';

/**
 * Runtime state of destinations and endpoints (docs/reference/destination-actions.md) for the API:
 * the compacted `sluice.destination-state` read whole and live through `@sluice/destination-state`,
 * every action appended to `sluice.destination-actions` and its state written there in one Kafka
 * transaction (both or neither), and every action read back from there into the log's database,
 * where the API lists them. This file is the only place the delivery log touches those topics.
 */
export type ControlAction = DestinationAction;
export const CONTROL_ACTIONS = DESTINATION_ACTIONS;
export type StateValue = DestinationStateValue;
export type ActionRecord = DestinationActionRecord;

/** An action asked for: on a destination or one of its endpoints, why, and by which token. */
export interface ActionRequest extends Actor {
  destinationId: string;
  endpointRef?: string;
  action: ControlAction;
  reason: string;
}

export interface DestinationControl {
  /** The state of a destination (no ref) or of one of its endpoints; undefined: never set (active). */
  get(destinationId: string, endpointRef?: string): StateValue | undefined;
  /** Appends the action and writes the state it leads to, in one transaction; resolves once Kafka holds both. */
  act(request: ActionRequest): Promise<ActionRecord>;
}

/** Where the actions read from the topic are kept (the log's database); keeping one twice changes nothing. */
export interface ActionKeeper {
  record(records: readonly ActionRecord[]): Promise<void>;
}

export interface KafkaControlOptions {
  kafka: Kafka;
  topics: { state: string; actions: string };
  clientId: string;
  logger: Logger;
  now: () => number;
  /** How the start waits out Kafka's "not yet" answers (the service's start-up retry); default none. */
  retry?: RetryKafka;
  /** Keeps every action read from the actions topic, and each one this replica makes. */
  keeper: ActionKeeper;
}

/** The Kafka implementation: one producer, the library's state reader, one reader of the actions (its own group). */
export class KafkaDestinationControl implements DestinationControl {
  readonly #writer: DestinationActionWriter;
  readonly #actionsConsumer: GroupConsumer;
  readonly #options: KafkaControlOptions;
  #states: DestinationStateReader | undefined;

  constructor(options: KafkaControlOptions) {
    this.#options = options;
    // Its own group and transactional id each start: every replica reads the actions whole and
    // commits nothing (the keeper keeps each once, whoever reads it), and no two writers share a
    // transactional id (none fences another).
    const instance = randomBytes(6).toString('hex');
    this.#writer = new DestinationActionWriter(options.kafka, {
      topics: options.topics,
      transactionalId: `${options.clientId}.control.${instance}`,
    });
    const groupId = `${options.clientId}.control.${instance}`;
    this.#actionsConsumer = createGroupConsumer(options.kafka, {
      groupId,
      logger: options.logger,
      maxWaitTimeInMs: 500,
    });
  }

  /** Starts reading both topics; resolves once the states written before the start are read (or after a bound). */
  async start(): Promise<void> {
    const { kafka, topics, clientId, logger, retry } = this.#options;
    await (retry ? retry('connect the control producer', () => this.#writer.connect()) : this.#writer.connect());
    this.#states = await startDestinationStateReader(kafka, topics.state, logger, {
      groupPrefix: `${clientId}.destination-state`,
      ...(retry && { retry }),
    });
    await this.#actionsConsumer.run(
      { topics: [topics.actions], fromBeginning: true },
      { autoCommit: false, eachBatch: async ({ batch }) => this.#keep(batch.messages) },
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CONTROL_CATCH_UP_MS)));
    const caughtUp = await Promise.race([this.#states.ready.then(() => 'ready' as const), late]);
    clearTimeout(timer);
    // Not read in time: serve anyway; the states arrive as the reader reads them.
    if (caughtUp === 'late') logger.warn({ topic: topics.state }, 'destination states not read up to the end at start');
  }

  async stop(): Promise<void> {
    await this.#actionsConsumer.disconnect();
    await this.#states?.close();
    await this.#writer.disconnect();
  }

  get(destinationId: string, endpointRef?: string): StateValue | undefined {
    return this.#states?.view.value(stateKey(destinationId, endpointRef));
  }

  async act(request: ActionRequest): Promise<ActionRecord> {
    const { destinationId, endpointRef, action, reason, by, byTokenId } = request;
    const at = new Date(this.#options.now()).toISOString();
    const record = actionRecord(action, destinationId, endpointRef, { reason, by, byTokenId, at, id: newActionId() });
    await this.#writer.write(record);
    // Seen at once by this replica's reads; the reader brings the same value a moment later.
    this.#states?.view.apply(stateKey(destinationId, endpointRef), stateOf(record));
    // Listed at once by this replica too. The topic holds the action: one the database cannot keep
    // now is kept when the reader reads it.
    await this.#options.keeper
      .record([record])
      .catch((err: unknown) => this.#options.logger.warn({ err, id: record.id }, 'destination action not kept yet'));
    return record;
  }

  /**
   * Keeps a batch of the actions topic (a failure is retried by the consumer, from the start of the
   * topic once run again: keeping one twice changes nothing); a record that is not an action is skipped.
   */
  async #keep(messages: readonly { value: Buffer | null }[]): Promise<void> {
    const records: ActionRecord[] = [];
    for (const { value } of messages) {
      let parsed: unknown;
      try {
        parsed = value === null ? null : JSON.parse(value.toString('utf8'));
      } catch {
        this.#options.logger.warn(
          { topic: this.#options.topics.actions },
          'destination action record is not JSON; ignored',
        );
        continue;
      }
      const record = parseActionRecord(parsed);
      if (record !== undefined) records.push(record);
    }
    await this.#options.keeper.record(records);
  }
}
