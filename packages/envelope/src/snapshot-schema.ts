/**
 * Audience and computed-trait snapshots (docs/reference/audiences.md), the value of `sluice.audiences`. Registered
 * under `<audiences topic>-value` when a schema registry is configured, and used by audience-sync
 * to validate what it reads, whichever way a snapshot arrived.
 */
export interface AudienceSnapshot {
  sourceId: string;
  /** Audience name; the trait key is its snake_case form. */
  audience: string;
  syncId: string;
  /** userIds in this chunk. */
  members: string[];
  /** True on the last chunk of a sync. */
  final: boolean;
}

export interface ComputedTraitSnapshot {
  sourceId: string;
  /** Trait name; the trait key is its snake_case form. */
  trait: string;
  syncId: string;
  /** userId → value, for this chunk. */
  values: Record<string, unknown>;
  final: boolean;
}

export type Snapshot = AudienceSnapshot | ComputedTraitSnapshot;

const id = { type: 'string', minLength: 1 } as const;

export const snapshotJsonSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://sluice.dev/schemas/audience-snapshot.json',
  title: 'SluiceAudienceSnapshot',
  type: 'object',
  required: ['sourceId', 'syncId', 'final'],
  properties: {
    sourceId: id,
    syncId: id,
    final: { type: 'boolean' },
    audience: id,
    members: { type: 'array', items: id },
    trait: id,
    values: { type: 'object' },
  },
  // Exactly one kind: an audience (name + members) or a computed trait (name + values).
  oneOf: [
    { required: ['audience', 'members'], not: { anyOf: [{ required: ['trait'] }, { required: ['values'] }] } },
    { required: ['trait', 'values'], not: { anyOf: [{ required: ['audience'] }, { required: ['members'] }] } },
  ],
  additionalProperties: true,
} as const;
