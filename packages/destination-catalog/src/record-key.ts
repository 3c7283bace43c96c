import { randomBytes } from 'node:crypto';
import { KEY_NONCE_BYTES } from './constants.ts';

/** What a catalog record is of: a runtime destination, or a runtime source. */
export type RecordKind = 'destination' | 'source';

/** The destination or source a record is of. */
export interface Subject {
  kind: RecordKind;
  id: string;
}

/** What starts the key of every source record; ids never hold `:`, so no destination's key starts so. */
const SOURCE_PREFIX = 'source:';

/**
 * A subject's *name*, the part of its records' keys before `@`: a destination's id as it is, a
 * source's id after `source:`. The apply rule keeps one record in force per name, so a source and
 * a destination may share an id.
 */
export const nameOf = (subject: Subject): string =>
  subject.kind === 'source' ? `${SOURCE_PREFIX}${subject.id}` : subject.id;

/** A new key for a record of `subject`: `<name>@<16 hex characters>` (ids never hold `@`). */
export function recordKey(subject: Subject): string {
  return `${nameOf(subject)}@${randomBytes(KEY_NONCE_BYTES).toString('hex')}`;
}

/** The subject a record key names, or undefined for a key of another form. */
export function subjectOfKey(key: string): Subject | undefined {
  const at = key.lastIndexOf('@');
  if (at <= 0 || at === key.length - 1) return undefined;
  const name = key.slice(0, at);
  if (!name.startsWith(SOURCE_PREFIX)) return { kind: 'destination', id: name };
  const id = name.slice(SOURCE_PREFIX.length);
  return id === '' ? undefined : { kind: 'source', id };
}

/** The name a record key's records share (what comes before `@`). */
export const nameOfKey = (key: string): string => key.slice(0, key.lastIndexOf('@'));
