import { ENVELOPE_FIELDS } from '@sluice/envelope';
import { OMITTED_FIELDS } from './normalise-call.ts';

/**
 * The member keys the envelope splice treats specially: every envelope field (set by ingest,
 * or dropped when sent as `null`) and every omitted field. All are plain ASCII names with no
 * character JSON escapes, so a key's text matches one only when it is that name exactly: a
 * key written with an escape (`\"`, `\\`, `\n`, ...; `\u` never reaches the splice) decodes to
 * something no special name contains.
 */
const SPECIAL_KEYS: readonly string[] = [...new Set([...Object.keys(ENVELOPE_FIELDS), ...OMITTED_FIELDS])];

/** Special keys by length, so a key is compared only with the names as long as it is. */
const BY_LENGTH: (string[] | undefined)[] = [];
for (const key of SPECIAL_KEYS) (BY_LENGTH[key.length] ??= []).push(key);

/**
 * The special key (the interned constant) whose quoted text spans `text[keyStart, keyEnd)`,
 * else undefined; compares in place instead of slicing the key out of the text.
 */
export function specialKeyAt(text: string, keyStart: number, keyEnd: number): string | undefined {
  const names = BY_LENGTH[keyEnd - keyStart - 2];
  if (names === undefined) return undefined;
  for (const name of names) if (text.startsWith(name, keyStart + 1)) return name;
  return undefined;
}
