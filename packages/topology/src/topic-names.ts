import { formatDuration, type SluiceConfig } from '@sluice/config';

/** The delay-tier topic for a tier of `ms` (docs/reference/retries.md): `sluice.delay.10s`, `sluice.delay.60m`. */
export function delayTopicName(config: SluiceConfig, ms: number): string {
  return `${config.kafka.topics.delayPrefix}${formatDuration(ms)}`;
}

/**
 * The parked topic of a destination (docs/reference/destination-states.md): `sluice.parked.<destinationId>`.
 * The id goes in as it is; the config refuses two ids Kafka would take for one topic name (`a.b`, `a_b`).
 */
export function parkedTopicName(config: SluiceConfig, destinationId: string): string {
  return `${config.kafka.topics.parkedPrefix}${destinationId}`;
}

/**
 * The waiting topic of an ordered destination (docs/reference/ordering.md):
 * `sluice.waiting.<destinationId>`, where a user's events wait behind a retrying head.
 */
export function waitingTopicName(config: SluiceConfig, destinationId: string): string {
  return `${config.kafka.topics.waitingPrefix}${destinationId}`;
}

/** Whether `topic` is a waiting topic (`waitingTopicName`): its name begins with `kafka.topics.waitingPrefix`. */
export function isWaitingTopic(config: SluiceConfig, topic: string): boolean {
  return topic.startsWith(config.kafka.topics.waitingPrefix);
}
