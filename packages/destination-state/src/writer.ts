import { SafeProducer, type RecordSink } from '@sluice/kafka';
import { invalidStateValue, type DestinationStateValue } from './state.ts';
import { InvalidStateValueError } from './errors.ts';

/**
 * Writes one key of `sluice.destination-state` (null deletes it: back to active with no record of
 * who). Through the one producer preset, so a resolved write is acknowledged by all in-sync
 * replicas; every reader sees it within a fetch wait (100 ms) of that.
 */
export async function writeDestinationState(
  producer: SafeProducer | RecordSink,
  topic: string,
  key: string,
  value: DestinationStateValue | null,
): Promise<void> {
  if (value !== null) {
    const invalid = invalidStateValue(value);
    if (invalid !== undefined) throw new InvalidStateValueError(key, invalid);
  }
  const message = { key, value: value === null ? null : JSON.stringify(value) };
  if (producer instanceof SafeProducer) await producer.send(topic, [message]);
  else await producer.send(topic, message);
}
