/**
 * Text the database can keep. PostgreSQL's text holds no U+0000 and its JSON parser refuses a
 * lone UTF-16 surrogate, while a JavaScript string, and JSON read by JavaScript, can have both: one
 * such character in one record would fail its whole batch, again after every restart. Each becomes
 * U+FFFD (the replacement character) as the record is read, so every key the ingestion compares
 * is the one the database keeps.
 */

/** Every lone surrogate. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Every backslash escape of JSON text, left to right: a surrogate pair (kept whole), one `\uXXXX`, or any other. */
const ESCAPE = /\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u([0-9a-fA-F]{4})|\\./g;

export function storableText(text: string): string {
  return text.replaceAll('\u0000', '\ufffd').replace(LONE_SURROGATE, '\ufffd');
}

/** JSON text whose `\u0000` and lone-surrogate escapes read `\ufffd`; other escapes (`\\` included) are kept. */
export function storableJson(text: string): string {
  if (!text.includes('\\u')) return text;
  return text.replace(ESCAPE, (sequence, code: string | undefined) => {
    if (code === undefined) return sequence;
    const unit = Number.parseInt(code, 16);
    return unit === 0 || (unit >= 0xd800 && unit <= 0xdfff) ? '\\ufffd' : sequence;
  });
}
