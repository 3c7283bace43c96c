import { randomBytes } from 'node:crypto';
import { type Admin, createGroupConsumer, type GroupConsumer, type Kafka, SafeProducer } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { CONTROL_CATCH_UP_MS, MAX_ACTIONS_KEPT } from '../constants.ts';

/**
 * Runtime state of destinations and endpoints (docs/reference/destination-actions.md), behind one
 * small interface: the compacted topic `sluice.destination-state` (key `<destinationId>` or
 * `<destinationId>/<endpointRef>`, value {@link StateValue}) read from its beginning and kept live,
 * and every action appended to `sluice.destination-actions`, whose newest records the API lists.
 * This file is the only place the delivery log touches those topics.
 */
export type ControlState = 'active' | 'paused' | 'disabled';
export type ControlAction = 'pause' | 'resume' | 'disable' | 'enable';
export const CONTROL_ACTIONS: readonly ControlAction[] = ['pause', 'resume', 'disable', 'enable'];

/** The value of a state record. */
export interface StateValue {
  state: ControlState;
  reason: string;
  by: string;
  /** ISO time of the change. */
  at: string;
  /** Set by the deliverer's auto-disable. */
  auto?: true;
}

/** One record of `sluice.destination-actions`. */
export interface ActionRecord {
  action: ControlAction;
  destinationId: string;
  endpointRef?: string;
  state: ControlState;
  reason: string;
  by: string;
  at: string;
  auto?: true;
}

export interface DestinationControl {
  /** The state of a destination (no ref) or of one of its endpoints; undefined: never set (active). */
  get(destinationId: string, endpointRef?: string): StateValue | undefined;
  /** Writes the state the action leads to and appends the action; resolves once Kafka holds both. */
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

const STATE_OF: Record<ControlAction, ControlState> = {
  pause: 'paused',
  resume: 'active',
  disable: 'disabled',
  enable: 'active',
};

export const stateKey = (destinationId: string, endpointRef?: string): string =>
  endpointRef === undefined ? destinationId : `${destinationId}/${endpointRef}`;

export interface KafkaControlOptions {
  kafka: Kafka;
  /** Reads where the state topic ends at start, so `start` resolves once the states up to there are read. */
  admin: Admin;
  topics: { state: string; actions: string };
  clientId: string;
  logger: Logger;
  now: () => number;
}

/** The Kafka implementation: one producer, one consumer of both topics (its own group, from the beginning). */
export class KafkaDestinationControl implements DestinationControl {
  readonly #states = new Map<string, StateValue>();
  readonly #actions: ActionRecord[] = [];
  readonly #producer: SafeProducer;
  readonly #consumer: GroupConsumer;
  readonly #options: KafkaControlOptions;
  /** Per partition of the state topic, the offset after the last record read. */
  readonly #read = new Map<number, number>();

  constructor(options: KafkaControlOptions) {
    this.#options = options;
    this.#producer = new SafeProducer(options.kafka);
    // Its own group each start: every replica reads both topics whole, and commits nothing.
    const groupId = `${options.clientId}.control.${randomBytes(6).toString('hex')}`;
    // Run again after a Kafka error; with nothing committed it reads both topics again from the start.
    this.#consumer = createGroupConsumer(options.kafka, { groupId, logger: options.logger, maxWaitTimeInMs: 500 });
  }

  /** Starts reading both topics; resolves once the state topic is read up to where it ended at start. */
  async start(): Promise<void> {
    await this.#producer.connect();
    const { state, actions } = this.#options.topics;
    const ends = (await this.#options.admin.fetchTopicOffsets(state))
      .filter((o) => Number(o.high) > Number(o.low))
      .map((o) => [o.partition, Number(o.high)] as const);
    await this.#consumer.run(
      { topics: [state, actions], fromBeginning: true },
      {
        autoCommit: false,
        eachMessage: async ({ topic, partition, message }) => {
          if (topic === state) this.#read.set(partition, Number(message.offset) + 1);
          this.#apply(topic, message.key?.toString(), message.value);
        },
      },
    );
    const caughtUp = () => ends.every(([p, high]) => (this.#read.get(p) ?? 0) >= high);
    const deadline = Date.now() + CONTROL_CATCH_UP_MS;
    while (!caughtUp() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // Not read in time: serve anyway; the states arrive as the consumer reads them.
    if (!caughtUp()) this.#options.logger.warn({ topic: state }, 'destination states not read up to the end at start');
  }

  async stop(): Promise<void> {
    await this.#consumer.disconnect();
    await this.#producer.disconnect();
  }

  get(destinationId: string, endpointRef?: string): StateValue | undefined {
    return this.#states.get(stateKey(destinationId, endpointRef));
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
    const value: StateValue = { state: STATE_OF[action], reason, by, at };
    const record: ActionRecord = {
      action,
      destinationId,
      ...(endpointRef !== undefined && { endpointRef }),
      state: value.state,
      reason,
      by,
      at,
    };
    const key = stateKey(destinationId, endpointRef);
    await this.#producer.send(this.#options.topics.state, [{ key, value: JSON.stringify(value) }]);
    await this.#producer.send(this.#options.topics.actions, [{ key, value: JSON.stringify(record) }]);
    // Seen at once by this replica's reads; the consumer brings the same value a moment later.
    this.#states.set(key, value);
    return record;
  }

  #apply(topic: string, key: string | undefined, value: Buffer | null): void {
    if (key === undefined) return;
    let parsed: unknown;
    try {
      parsed = value === null ? null : JSON.parse(value.toString('utf8'));
    } catch {
      this.#options.logger.warn({ topic, key }, 'destination control record is not JSON; ignored');
      return;
    }
    if (topic === this.#options.topics.state) {
      if (parsed === null) this.#states.delete(key);
      else if (isStateValue(parsed)) this.#states.set(key, parsed);
      return;
    }
    if (
      isActionRecord(parsed) &&
      !this.#actions.some((a) => a.at === parsed.at && stateKey(a.destinationId, a.endpointRef) === key)
    ) {
      this.#actions.push(parsed);
      if (this.#actions.length > MAX_ACTIONS_KEPT) this.#actions.shift();
    }
  }
}

const STATES = new Set<unknown>(['active', 'paused', 'disabled']);

function isStateValue(v: unknown): v is StateValue {
  const s = v as StateValue;
  return (
    typeof v === 'object' &&
    v !== null &&
    STATES.has(s.state) &&
    typeof s.reason === 'string' &&
    typeof s.by === 'string' &&
    typeof s.at === 'string'
  );
}

function isActionRecord(v: unknown): v is ActionRecord {
  const a = v as ActionRecord;
  return (
    isStateValue(v) && (CONTROL_ACTIONS as readonly unknown[]).includes(a.action) && typeof a.destinationId === 'string'
  );
}
