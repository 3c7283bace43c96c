import type { DeadLetterFilter } from '@sluice/dead-letters';
import { DEAD_REASONS, type DeadReason } from '@sluice/envelope';
import { CliError } from '../io.ts';

/** The reasons a dead letter can carry (`@sluice/envelope`'s list). */
export { DEAD_REASONS };

export interface DlqFilterFlags {
  destination?: string;
  source?: string;
  reason?: string;
  since?: string;
  until?: string;
}

/** ISO 8601 (`2026-11-21`, `2026-11-21T10:00:00Z`) or epoch milliseconds. */
export function parseTime(flag: string, value: string): number {
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms))
    throw new CliError(`--${flag}: not a time: ${JSON.stringify(value)} (ISO 8601 or epoch ms)`);
  return ms;
}

/** Turns the command-line flags into a dead-letter filter, rejecting unknown reasons. */
export function filterFromFlags(flags: DlqFilterFlags): DeadLetterFilter {
  if (flags.reason !== undefined && !(DEAD_REASONS as readonly string[]).includes(flags.reason)) {
    throw new CliError(`--reason: must be one of ${DEAD_REASONS.join(', ')}`);
  }
  return {
    ...(flags.destination !== undefined && { destinationId: flags.destination }),
    ...(flags.source !== undefined && { sourceId: flags.source }),
    ...(flags.reason !== undefined && { reason: flags.reason as DeadReason }),
    ...(flags.since !== undefined && { since: parseTime('since', flags.since) }),
    ...(flags.until !== undefined && { until: parseTime('until', flags.until) }),
  };
}

/** True when the filter narrows anything down (a replay of everything needs `--all`). */
export function hasFilter(filter: DeadLetterFilter): boolean {
  return Object.values(filter).some((v) => v !== undefined);
}

/** `destination=d reason=r since=…`, or `every dead letter` for the empty filter. */
export function describeFilter(filter: DeadLetterFilter): string {
  const parts = [
    ...(filter.destinationId !== undefined ? [`destination=${filter.destinationId}`] : []),
    ...(filter.sourceId !== undefined ? [`source=${filter.sourceId}`] : []),
    ...(filter.reason !== undefined ? [`reason=${filter.reason}`] : []),
    ...(filter.since !== undefined ? [`since=${new Date(filter.since).toISOString()}`] : []),
    ...(filter.until !== undefined ? [`until=${new Date(filter.until).toISOString()}`] : []),
  ];
  return parts.length > 0 ? parts.join(' ') : 'every dead letter';
}
