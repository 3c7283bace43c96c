import { createHash } from 'node:crypto';
import type { SyncTarget } from './snapshot.ts';

/**
 * The `messageId` of an emitted identify: a UUID-shaped digest of (kind, source, name, user, sync),
 * so the same change emitted twice (a replay after a crash) carries the same id and receivers can
 * de-duplicate it, while the same user in another sync gets a new id (docs/reference/audiences.md).
 */
export function identifyMessageId(target: SyncTarget, userId: string, syncId: string): string {
  const hex = createHash('sha256')
    .update([target.kind, target.sourceId, target.name, userId, syncId].join('\u0000'))
    .digest('hex');
  // Version 5-style layout (name-based, SHA digest) so it reads as a UUID everywhere.
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
