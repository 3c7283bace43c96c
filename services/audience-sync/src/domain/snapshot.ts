import { isJsonObject } from '@sluice/envelope';
import { MAX_USER_ID_CHARS } from '../constants.ts';
import { InvalidSnapshotError } from '../errors.ts';
import { snakeCase } from './snake-case.ts';

export type SyncKind = 'audience' | 'trait';

/** What a sync is about: one audience or computed trait of one source. */
export interface SyncTarget {
  kind: SyncKind;
  sourceId: string;
  /** The name as sent (`"High Value Users"`). */
  name: string;
  /** Its snake_case trait property (`high_value_users`). */
  property: string;
}

interface ChunkBase {
  target: SyncTarget;
  syncId: string;
  /** The last chunk of its sync: the sync is complete once this one is handled. */
  final: boolean;
}

export interface AudienceChunk extends ChunkBase {
  kind: 'audience';
  members: string[];
}

export interface TraitChunk extends ChunkBase {
  kind: 'trait';
  /** userId → the trait's value, as JSON text (so equality is textual and storage is compact). */
  values: [userId: string, valueJson: string][];
}

export type SnapshotChunk = AudienceChunk | TraitChunk;

export type ParseResult = { ok: true; chunk: SnapshotChunk } | { ok: false; error: InvalidSnapshotError };

const fail = (code: string, field: string, message: string): ParseResult => ({
  ok: false,
  error: new InvalidSnapshotError(code, field, message),
});

const badUserId = (id: unknown) => typeof id !== 'string' || id.length === 0 || id.length > MAX_USER_ID_CHARS;

/**
 * Checks one snapshot chunk against docs/reference/audiences.md. `expected` pins the kind (each HTTP route takes one);
 * without it (records on `sluice.audiences`) the kind is told by the `audience` or `trait` field.
 */
export function parseSnapshot(
  value: unknown,
  isKnownSource: (id: string) => boolean,
  expected?: SyncKind,
): ParseResult {
  if (!isJsonObject(value)) return fail('invalid_snapshot', '(snapshot)', 'must be a JSON object');
  const kind: SyncKind | undefined =
    expected ?? ('audience' in value ? 'audience' : 'trait' in value ? 'trait' : undefined);
  if (!kind) return fail('missing_field', 'audience', 'is required (or `trait` for a computed trait)');
  if ('audience' in value && 'trait' in value)
    return fail('invalid_snapshot', 'trait', 'a snapshot is either an audience or a computed trait, not both');

  const { sourceId, syncId, final } = value;
  if (typeof sourceId !== 'string' || sourceId.length === 0)
    return fail('missing_field', 'sourceId', 'must be a non-empty string');
  if (!isKnownSource(sourceId)) return fail('unknown_source', 'sourceId', `no source "${sourceId}" is configured`);
  const nameField = kind === 'audience' ? 'audience' : 'trait';
  const name = value[nameField];
  if (typeof name !== 'string' || name.trim().length === 0)
    return fail('missing_field', nameField, 'must be a non-empty string');
  if (name.length > 200 || name.includes('\u0000'))
    return fail('invalid_name', nameField, 'must be at most 200 characters, without NUL');
  const property = snakeCase(name);
  if (property.length === 0) return fail('invalid_name', nameField, 'must contain at least one letter or digit');
  if (typeof syncId !== 'string' || syncId.length === 0 || syncId.length > 200)
    return fail('missing_field', 'syncId', 'must be a string of 1–200 characters');
  if (typeof final !== 'boolean')
    return fail('missing_field', 'final', 'must be true or false (true on the last chunk of a sync)');
  const target: SyncTarget = { kind, sourceId, name, property };

  if (kind === 'audience') {
    const { members } = value;
    if (!Array.isArray(members)) return fail('missing_field', 'members', 'must be an array of user ids');
    for (let i = 0; i < members.length; i++) {
      if (badUserId(members[i]))
        return fail('invalid_member', `members[${i}]`, `must be a user id of 1–${MAX_USER_ID_CHARS} characters`);
    }
    return { ok: true, chunk: { kind, target, syncId, final, members: members as string[] } };
  }
  const { values } = value;
  if (!isJsonObject(values)) return fail('missing_field', 'values', 'must be an object of userId → value');
  const pairs: [string, string][] = [];
  for (const [userId, v] of Object.entries(values)) {
    if (badUserId(userId))
      return fail('invalid_member', 'values', `keys must be user ids of 1–${MAX_USER_ID_CHARS} characters`);
    if (v === null || v === undefined)
      return fail('invalid_value', `values.${userId}`, 'must be a JSON value other than null');
    pairs.push([userId, JSON.stringify(v)]);
  }
  return { ok: true, chunk: { kind, target, syncId, final, values: pairs } };
}

/** The chunk in its wire form (docs/reference/audiences.md), as written onto `sluice.audiences`. */
export function snapshotToWire(chunk: SnapshotChunk): Record<string, unknown> {
  const { target, syncId, final } = chunk;
  if (chunk.kind === 'audience')
    return { sourceId: target.sourceId, audience: target.name, syncId, members: chunk.members, final };
  const values: Record<string, unknown> = {};
  for (const [userId, json] of chunk.values) values[userId] = JSON.parse(json);
  return { sourceId: target.sourceId, trait: target.name, syncId, values, final };
}

/**
 * Key of a chunk on `sluice.audiences`: every chunk of one audience (or trait) must share a
 * partition so its syncs are read in order. Upstream producers must use the same key.
 */
export function snapshotKey(target: Pick<SyncTarget, 'sourceId' | 'name'>): string {
  return `${target.sourceId}:${target.name}`;
}

/** A stable identity of the target, used for state keys and in-memory maps. */
export function targetId(target: Pick<SyncTarget, 'kind' | 'sourceId' | 'name'>): string {
  return `${target.kind}\u0000${target.sourceId}\u0000${target.name}`;
}
