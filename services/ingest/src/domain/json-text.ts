/**
 * `JSON.stringify(value)` for the values ingest writes into an envelope, with a cheaper path for
 * the common case, a string with nothing to escape: quoted as it is. Same output as
 * `JSON.stringify` for every input.
 */
export function jsonText(value: unknown): string {
  if (typeof value === 'string' && plain(value)) return `"${value}"`;
  return JSON.stringify(value);
}

/** True when JSON writes `s` between quotes unchanged: no control character, `"`, `\` or surrogate. */
function plain(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}
