import { SafeProducer, type RecordSink } from '@sluice/kafka';
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
}

/** The action record of `action` on `destinationId` (and `endpointRef`), with the state it leads to. */
export function actionRecord(
  action: DestinationAction,
  destinationId: string,
  endpointRef: string | undefined,
  change: Omit<DestinationStateValue, 'state'>,
): DestinationActionRecord {
  return {
    action,
    destinationId,
    ...(endpointRef !== undefined && { endpointRef }),
    state: STATE_AFTER[action],
    // Cut to the bounds every reader checks (a long last error in an auto-disable reason).
    reason: change.reason.slice(0, MAX_REASON_CHARS),
    by: change.by.slice(0, MAX_BY_CHARS),
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
