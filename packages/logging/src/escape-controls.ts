// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * Text from outside (a topic, a receiver's answer) made safe to show: control characters (C0, DEL,
 * C1; a terminal reads ESC and CSI as commands) and the line and paragraph separators are written
 * as `\xHH` / `\uHHHH` escapes.
 */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
