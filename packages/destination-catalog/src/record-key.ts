import { randomBytes } from 'node:crypto';
import { KEY_NONCE_BYTES } from './constants.ts';

/** What a catalog record is of: a runtime destination, a runtime source, or a tenant token of the delivery log's API. */
export type RecordKind = 'destination' | 'source' | 'token';

/** The destination or source a record is of. */
export interface Subject {
  kind: RecordKind;
  id: string;
}

/** What starts the key of every source record, and of every token's; ids never hold `:`, so no destination's key starts so. */
const SOURCE_PREFIX = 'source:';
const TOKEN_PREFIX = 'token:';
const PREFIXES = [
  ['source', SOURCE_PREFIX],
  ['token', TOKEN_PREFIX],
] as const;

/**
 * A subject's *name*, the part of its records' keys before `@`: a destination's id as it is, a
 * source's id after `source:`. The apply rule keeps one record in force per name, so a source and
 * a destination may share an id.
 */
export const nameOf = (subject: Subject): string =>
  `${PREFIXES.find(([kind]) => kind === subject.kind)?.[1] ?? ''}${subject.id}`;

/** A new key for a record of `subject`: `<name>@<16 hex characters>` (ids never hold `@`). */
export function recordKey(subject: Subject): string {
  return `${nameOf(subject)}@${randomBytes(KEY_NONCE_BYTES).toString('hex')}`;
}

/** The subject a record key names, or undefined for a key of another form. */
export function subjectOfKey(key: string): Subject | undefined {
  const at = key.lastIndexOf('@');
  if (at <= 0 || at === key.length - 1) return undefined;
  const name = key.slice(0, at);
  const prefixed = PREFIXES.find(([, prefix]) => name.startsWith(prefix));
  if (prefixed === undefined) return { kind: 'destination', id: name };
  const id = name.slice(prefixed[1].length);
  return id === '' ? undefined : { kind: prefixed[0], id };
}

/** The name a record key's records share (what comes before `@`). */
export const nameOfKey = (key: string): string => key.slice(0, key.lastIndexOf('@'));
