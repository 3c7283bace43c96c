import type { DeadReason, RetryState } from '@sluice/envelope';
import { InvalidFilterError } from './errors.ts';

/** Which dead letters to list or replay; every field is optional and they combine with AND. */
export interface DeadLetterFilter {
  /** One event's dead letters (the delivery log's replay of one message). */
  messageId?: string;
  destinationId?: string;
  sourceId?: string;
  reason?: DeadReason;
  /** Dead at or after this time (epoch ms). */
  since?: number;
  /** Dead before this time (epoch ms). */
  until?: number;
  /** `any` (default), `yes` (only those already replayed) or `no` (only those never replayed). */
  replayed?: 'any' | 'yes' | 'no';
}

/** What the filter needs to know about one dead letter. */
export interface FilterSubject {
  state: RetryState;
  replayedAt?: number;
}

export function validateFilter(filter: DeadLetterFilter): void {
  if (filter.since !== undefined && filter.until !== undefined && filter.since > filter.until) {
    throw new InvalidFilterError('since must not be after until');
  }
}

export function matchesFilter(letter: FilterSubject, filter: DeadLetterFilter): boolean {
  const { state } = letter;
  if (filter.messageId !== undefined && state.messageId !== filter.messageId) return false;
  if (filter.destinationId !== undefined && state.destinationId !== filter.destinationId) return false;
  if (filter.sourceId !== undefined && state.sourceId !== filter.sourceId) return false;
  if (filter.reason !== undefined && state.deadReason !== filter.reason) return false;
  const deadAt = state.deadAt;
  if (filter.since !== undefined && (deadAt === undefined || deadAt < filter.since)) return false;
  if (filter.until !== undefined && (deadAt === undefined || deadAt >= filter.until)) return false;
  if (filter.replayed === 'yes' && letter.replayedAt === undefined) return false;
  if (filter.replayed === 'no' && letter.replayedAt !== undefined) return false;
  return true;
}
