import { randomUUID } from 'node:crypto';
import { type Kafka, SafeProducer, type RecordSink } from '@sluice/kafka';
import {
  type DestinationStateName,
  type DestinationStateValue,
  invalidStateValue,
  MAX_BY_CHARS,
  MAX_REASON_CHARS,
  stateKey,
} from './state.ts';
import { InvalidStateValueError } from './errors.ts';

/** What an operator (or auto-disable) does to a destination or an endpoint (docs/reference/destination-actions.md). */
export const DESTINATION_ACTIONS = ['pause', 'resume', 'disable', 'enable'] as const;
export type DestinationAction = (typeof DESTINATION_ACTIONS)[number];

/** The state each action leads to. */
export const STATE_AFTER: Record<DestinationAction, DestinationStateName> = {
  pause: 'paused',
  resume: 'active',
  disable: 'disabled',
  enable: 'active',
};

/** One record of `sluice.destination-actions`: the action and the state value it wrote. */
export interface DestinationActionRecord extends DestinationStateValue {
  action: DestinationAction;
  destinationId: string;
  endpointRef?: string;
  /**
   * Unique per action (a UUID): two actions on one key within one millisecond stay two. Absent
   * from records written before actions had one; readers then tell them apart by key and `at`.
   */
  id?: string;
  /**
   * The id of the token that did it (docs/reference/destination-actions.md, "Recorded actions"): a
   * tenant token's id, `admin` for the config's admin token, a portal link's id, `sluice` for
   * auto-disable. Absent from records written before actions named it; `by` is the token's name.
   */
  byTokenId?: string;
}

/** Longest action id read back (a UUID is 36 characters). */
const MAX_ACTION_ID_CHARS = 64;

/** What Sluice's own actions (auto-disable) record as `byTokenId`, beside `by: sluice`. */
export const AUTO_TOKEN_ID = 'sluice';

/** A fresh action id. */
export const newActionId = (): string => randomUUID();

/** The action record of `action` on `destinationId` (and `endpointRef`), with the state it leads to. */
export function actionRecord(
  action: DestinationAction,
  destinationId: string,
  endpointRef: string | undefined,
  change: Omit<DestinationStateValue, 'state'> & { id?: string; byTokenId?: string },
): DestinationActionRecord {
  return {
    action,
    destinationId,
    ...(endpointRef !== undefined && { endpointRef }),
    ...(change.id !== undefined && { id: change.id }),
    state: STATE_AFTER[action],
    // Cut to the bounds every reader checks (a long last error in an auto-disable reason).
    reason: change.reason.slice(0, MAX_REASON_CHARS),
    by: change.by.slice(0, MAX_BY_CHARS),
    ...(change.byTokenId !== undefined && { byTokenId: change.byTokenId.slice(0, MAX_BY_CHARS) }),
    at: change.at,
    ...(change.auto && { auto: true as const }),
  };
}

/** The state value an action record wrote. */
export function stateOf(record: DestinationActionRecord): DestinationStateValue {
  return {
    state: record.state,
    reason: record.reason,
    by: record.by,
    at: record.at,
    ...(record.auto && { auto: true }),
  };
}

/** An action record read from the topic, or undefined for anything else. */
export function parseActionRecord(value: unknown): DestinationActionRecord | undefined {
  if (invalidStateValue(value) !== undefined) return undefined;
  const v = value as DestinationActionRecord;
  if (!DESTINATION_ACTIONS.includes(v.action) || typeof v.destinationId !== 'string') return undefined;
  if (v.endpointRef !== undefined && typeof v.endpointRef !== 'string') return undefined;
  if (v.id !== undefined && (typeof v.id !== 'string' || v.id === '' || v.id.length > MAX_ACTION_ID_CHARS))
    return undefined;
  if (v.byTokenId !== undefined && (typeof v.byTokenId !== 'string' || v.byTokenId === '')) return undefined;
  return actionRecord(v.action, v.destinationId, v.endpointRef, v);
}

/** Appends an action to `sluice.destination-actions` (keyed like its state), acknowledged by Kafka. */
export async function appendDestinationAction(
  producer: SafeProducer | RecordSink,
  topic: string,
  record: DestinationActionRecord,
): Promise<void> {
  const invalid = invalidStateValue(stateOf(record));
  if (invalid !== undefined)
    throw new InvalidStateValueError(stateKey(record.destinationId, record.endpointRef), invalid);
  const message = { key: stateKey(record.destinationId, record.endpointRef), value: JSON.stringify(record) };
  if (producer instanceof SafeProducer) await producer.send(topic, [message]);
  else await producer.send(topic, message);
}

export interface ActionWriterOptions {
  /** `sluice.destination-state` and `sluice.destination-actions`. */
  topics: { state: string; actions: string };
  /** The producer's transactional id: unique per writer process (a random suffix each start). */
  transactionalId: string;
}

/**
 * Writes an action and the state it leads to in one Kafka transaction: readers (read-committed,
 * kafkajs's default) see both records or neither, so no state changes without its action record
 * (the audit, the operator event) and no action is recorded that did not change the state.
 */
export class DestinationActionWriter {
  readonly #producer: ReturnType<Kafka['producer']>;
  readonly #topics: ActionWriterOptions['topics'];
  /** One transaction at a time per producer: actions queue behind each other. */
  #last: Promise<unknown> = Promise.resolve();

  constructor(kafka: Kafka, options: ActionWriterOptions) {
    this.#topics = options.topics;
    this.#producer = kafka.producer({
      transactionalId: options.transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
    });
  }

  connect(): Promise<void> {
    return this.#producer.connect();
  }

  disconnect(): Promise<void> {
    return this.#producer.disconnect();
  }

  /** Resolves once Kafka has committed both records; rejects (nothing visible) otherwise. */
  write(record: DestinationActionRecord): Promise<void> {
    const key = stateKey(record.destinationId, record.endpointRef);
    const invalid = invalidStateValue(stateOf(record));
    if (invalid !== undefined) return Promise.reject(new InvalidStateValueError(key, invalid));
    const run = this.#last.then(async () => {
      const tx = await this.#producer.transaction();
      try {
        await tx.send({ topic: this.#topics.actions, acks: -1, messages: [{ key, value: JSON.stringify(record) }] });
        await tx.send({
          topic: this.#topics.state,
          acks: -1,
          messages: [{ key, value: JSON.stringify(stateOf(record)) }],
        });
        await tx.commit();
      } catch (err) {
        await tx.abort().catch(() => undefined);
        throw err;
      }
    });
    this.#last = run.catch(() => undefined);
    return run;
  }
}
