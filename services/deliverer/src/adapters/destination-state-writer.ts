import type { RecordSink } from '@sluice/kafka';

/**
 * The deliverer's one use of the destination-state topics (docs/reference/destination-actions.md):
 * auto-disable writes an endpoint's `disabled` state to the compacted `sluice.destination-state`
 * (key `<destinationId>/<endpointRef>`) and appends the action to `sluice.destination-actions`, as
 * the delivery log's API does for an operator's action. Both through the deliverer's side-record
 * sink, so they are retried until Kafka holds them.
 */
export interface StateValue {
  state: 'active' | 'paused' | 'disabled';
  reason: string;
  by: string;
  at: string;
  auto?: true;
}

export function writeDestinationState(
  sink: RecordSink,
  topics: { state: string; actions: string },
  destinationId: string,
  endpointRef: string,
  value: StateValue,
): Promise<void> {
  const key = `${destinationId}/${endpointRef}`;
  const action = { action: 'disable', destinationId, endpointRef, ...value };
  return Promise.all([
    sink.send(topics.state, { key, value: JSON.stringify(value) }),
    sink.send(topics.actions, { key, value: JSON.stringify(action) }),
  ]).then(() => undefined);
}
