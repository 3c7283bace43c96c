import { MAX_BATCH_BYTES, MAX_BATCH_MESSAGES } from './constants.ts';

export interface BatchLimits {
  /** Whole request body, in bytes. */
  maxBytes: number;
  maxMessages: number;
}

export const DEFAULT_BATCH_LIMITS: BatchLimits = { maxBytes: MAX_BATCH_BYTES, maxMessages: MAX_BATCH_MESSAGES };

/**
 * How many of the queued messages (oldest first, from index `start`) go into the next request.
 * `overheadBytes` is the size of the body with an empty `batch` array; messages are joined
 * by one comma each. Takes messages while the next one still fits, so a batch is split only
 * when the next message would overflow a limit. Always takes at least one message when there
 * is one (a single message is at most 32 KB, far below the batch limit).
 */
export function nextBatchSize(
  messages: ArrayLike<{ readonly bytes: number }>,
  overheadBytes: number,
  limits: BatchLimits = DEFAULT_BATCH_LIMITS,
  start = 0,
): number {
  let bytes = overheadBytes;
  let count = 0;
  for (let i = start; i < messages.length && count < limits.maxMessages; i++) {
    const next = bytes + (messages[i]?.bytes ?? 0) + (count === 0 ? 0 : 1);
    if (next > limits.maxBytes && count > 0) break;
    bytes = next;
    count++;
  }
  return count;
}
