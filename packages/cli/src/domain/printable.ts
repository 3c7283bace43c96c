import { escapeControls, redactUrlsIn } from '@sluice/logging';

/**
 * Values read from Kafka (message ids, error text, endpoint URLs) printed to an operator's
 * terminal: control characters (C0, DEL, C1; a terminal reads ESC and CSI as commands) and the
 * line and paragraph separators are written as `\xHH` / `\uHHHH` escapes, and URLs in them are
 * redacted (`redactUrl`), so nothing read from a topic can move the cursor, recolour the screen or
 * show a credential.
 */
export function printable(value: string): string {
  return escapeControls(redactUrlsIn(value));
}

/** JSON for the terminal: `JSON.stringify` escapes C0 controls but not DEL, C1 or the separators. */
export function printableJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
