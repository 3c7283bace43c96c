let lastMs = Number.NaN;
let lastIso = '';

/**
 * `new Date(ms).toISOString()` (`2026-11-21T23:34:15.123Z`), remembering the last answer:
 * a burst of calls within one millisecond formats the time once.
 */
export function formatIsoTime(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}
