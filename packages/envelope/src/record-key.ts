import type { EventEnvelope } from './envelope.ts';

/**
 * The Kafka record key of an event (docs/reference/overview.md): `<sourceId>:<userId or anonymousId>`, so all of
 * one user's events stay on one partition and keep their order.
 */
export function recordKey(event: Pick<EventEnvelope, 'sourceId' | 'userId' | 'anonymousId'>): string {
  const who = event.userId ?? event.anonymousId ?? '';
  return `${event.sourceId}:${who}`;
}
