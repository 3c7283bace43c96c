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
import { CONTROL_CATCH_UP_MS, MAX_ACTIONS_KEPT } from '../../constants.ts';

/**
 * Runtime state of destinations and endpoints (docs/reference/destination-actions.md) for the API:
 * the compacted `sluice.destination-state` read whole and live through `@sluice/destination-state`,
 * every action appended to `sluice.destination-actions` and its state written there in one Kafka
 * transaction (both or neither), the newest actions listed by the API. This file is the only
 * place the delivery log touches those topics.
 */
export type ControlAction = DestinationAction;
export const CONTROL_ACTIONS = DESTINATION_ACTIONS;
export type StateValue = DestinationStateValue;
export type ActionRecord = DestinationActionRecord;

export interface DestinationControl {
  /** The state of a destination (no ref) or of one of its endpoints; undefined: never set (active). */
  get(destinationId: string, endpointRef?: string): StateValue | undefined;
  /** Appends the action and writes the state it leads to, in one transaction; resolves once Kafka holds both. */
  act(
    destinationId: string,
    endpointRef: string | undefined,
    action: ControlAction,
    reason: string,
    by: string,
  ): Promise<ActionRecord>;
  /** The newest actions first, at most `limit`. */
  actions(limit: number): ActionRecord[];
}

export interface KafkaControlOptions {
  kafka: Kafka;
  topics: { state: string; actions: string };
  clientId: string;
  logger: Logger;
  now: () => number;
  /** How the start waits out Kafka's "not yet" answers (the service's start-up retry); default none. */
  retry?: RetryKafka;
}

/** The Kafka implementation: one producer, the library's state reader, one reader of the actions (its own group). */
export class KafkaDestinationControl implements DestinationControl {
  readonly #actions: ActionRecord[] = [];
  readonly #writer: DestinationActionWriter;
  readonly #actionsConsumer: GroupConsumer;
  readonly #options: KafkaControlOptions;
  #states: DestinationStateReader | undefined;

  constructor(options: KafkaControlOptions) {
    this.#options = options;
    // Its own group and transactional id each start: every replica reads the actions whole and
    // commits nothing, and no two writers share a transactional id (none fences another).
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
      { autoCommit: false, eachMessage: async ({ message }) => this.#applyAction(message.value) },
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

  actions(limit: number): ActionRecord[] {
    return this.#actions.slice(-limit).reverse();
  }

  async act(
    destinationId: string,
    endpointRef: string | undefined,
    action: ControlAction,
    reason: string,
    by: string,
  ): Promise<ActionRecord> {
    const at = new Date(this.#options.now()).toISOString();
    const record = actionRecord(action, destinationId, endpointRef, { reason, by, at, id: newActionId() });
    const key = stateKey(destinationId, endpointRef);
    await this.#writer.write(record);
    // Seen at once by this replica's reads; the reader brings the same value a moment later.
    this.#states?.view.apply(key, stateOf(record));
    return record;
  }

  #applyAction(value: Buffer | null): void {
    let parsed: unknown;
    try {
      parsed = value === null ? null : JSON.parse(value.toString('utf8'));
    } catch {
      this.#options.logger.warn(
        { topic: this.#options.topics.actions },
        'destination action record is not JSON; ignored',
      );
      return;
    }
    const record = parseActionRecord(parsed);
    if (record === undefined) return;
    // Read again after a consumer restart: the same action once. By its id; a record without one
    // (written before actions had ids) by its key and time.
    const key = stateKey(record.destinationId, record.endpointRef);
    const same = (a: ActionRecord) =>
      record.id !== undefined
        ? a.id === record.id
        : a.id === undefined && a.at === record.at && stateKey(a.destinationId, a.endpointRef) === key;
    if (this.#actions.some(same)) return;
    this.#actions.push(record);
    if (this.#actions.length > MAX_ACTIONS_KEPT) this.#actions.shift();
  }
}
