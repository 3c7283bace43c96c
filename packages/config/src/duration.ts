/**
 * Durations in the config file are either a number of milliseconds or a string with a unit:
 * `250ms`, `5s`, `2m`, `4h`, `1.5s`.
 */
export const DURATION_PATTERN = '^\\d+(\\.\\d+)?(ms|s|m|h)$';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

export function parseDuration(value: string | number): number {
  if (typeof value === 'number') return value;
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(value);
  if (!match) throw new Error(`not a duration: ${value}`);
  return Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
}

/** Formats ms compactly for topic names and logs: 10000 → `10s`, 3600000 → `60m`. */
export function formatDuration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1_000 === 0) return `${ms / 1_000}s`;
  return `${ms}ms`;
}
