import type { RecordSink } from '@sluice/kafka';

/**
 * The deliverer's one use of the destination-state topics (docs/reference/destination-actions.md),
 * shaped as `@sluice/destination-state`'s writer so that it can take its place: auto-disable writes
 * an endpoint's state to the compacted `sluice.destination-state` (key `<destinationId>/<endpointRef>`)
 * and appends the action to `sluice.destination-actions`, as the delivery log's API does for an
 * operator's action. Both through the deliverer's side-record sink, retried until Kafka holds them.
 */
export interface StateValue {
  state: 'active' | 'paused' | 'disabled';
  reason: string;
  by: string;
  at: string;
  auto?: true;
}

export const stateKey = (destinationId: string, endpointRef?: string): string =>
  endpointRef === undefined ? destinationId : `${destinationId}/${endpointRef}`;

export function writeDestinationState(sink: RecordSink, topic: string, key: string, value: StateValue): Promise<void> {
  return sink.send(topic, { key, value: JSON.stringify(value) });
}

/** Appends the action that led to `value` (an action record of docs/reference/destination-actions.md). */
export function appendDestinationAction(
  sink: RecordSink,
  topic: string,
  action: { action: 'pause' | 'resume' | 'disable' | 'enable'; destinationId: string; endpointRef?: string },
  value: StateValue,
): Promise<void> {
  return sink.send(topic, {
    key: stateKey(action.destinationId, action.endpointRef),
    value: JSON.stringify({ ...action, ...value }),
  });
}
