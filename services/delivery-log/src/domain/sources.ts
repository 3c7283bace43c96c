import type { SourceWritten } from '@sluice/destination-catalog';
import type { AuditedChange } from './audit.ts';

/** What the audit calls each change of a source (an update is a rename: the name is all it sets), and the fields it sets. */
const CHANGES: Record<SourceWritten['kind'], { change: string; fields: (keyId: string | undefined) => string[] }> = {
  created: { change: 'created', fields: (keyId) => ['name', `writeKeys.${keyId}`] },
  updated: { change: 'renamed', fields: () => ['name'] },
  key_minted: { change: 'key_minted', fields: (keyId) => [`writeKeys.${keyId}`] },
  key_revoked: { change: 'key_revoked', fields: (keyId) => [`writeKeys.${keyId}.revokedAt`] },
};

/** The key a change minted or revoked: the one its outcome shows, or the one revoked since `before`. */
function changedKey(outcome: SourceWritten, before: readonly { id: string; revokedAt?: string }[]): string | undefined {
  if (outcome.writeKey !== undefined) return outcome.writeKey.id;
  const was = new Map(before.map((k) => [k.id, k.revokedAt]));
  return outcome.entry.definition.writeKeys.find((k) => k.revokedAt !== undefined && was.get(k.id) === undefined)?.id;
}

/**
 * What the audit records of a change of a source: what it was, and the fields it set, by name —
 * `name`, `writeKeys.<key id>` for a key minted, `writeKeys.<key id>.revokedAt` for one revoked.
 * Key ids only: never a key, never a digest.
 */
export function sourceChangeOf(
  outcome: SourceWritten,
  context: { before: readonly { id: string; revokedAt?: string }[] },
): Pick<AuditedChange, 'change' | 'fields'> {
  const { change, fields } = CHANGES[outcome.kind];
  return { change, fields: fields(changedKey(outcome, context.before)) };
}
