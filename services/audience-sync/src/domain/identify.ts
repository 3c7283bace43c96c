import type { EventEnvelope } from '@sluice/envelope';
import { identifyMessageId } from './message-id.ts';
import type { SyncTarget } from './snapshot.ts';

/**
 * The identify event announcing one member change (docs/reference/audiences.md): `traits: { <property>: value }` and
 * `context.audience` (or `context.computedTrait`) `{ name, key, syncId }` so receivers can tell
 * where it came from. `now` is the completion time of the sync, ISO 8601 with milliseconds.
 */
export function buildIdentify(
  target: SyncTarget,
  userId: string,
  value: unknown,
  syncId: string,
  now: string,
): EventEnvelope {
  const origin = { name: target.name, key: target.property, syncId };
  return {
    sourceId: target.sourceId,
    type: 'identify',
    messageId: identifyMessageId(target, userId, syncId),
    userId,
    traits: { [target.property]: value },
    context: target.kind === 'audience' ? { audience: origin } : { computedTrait: origin },
    timestamp: now,
    receivedAt: now,
  };
}
