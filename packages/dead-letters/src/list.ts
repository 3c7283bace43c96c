import type { SluiceConfig } from '@sluice/config';
import { RETRY_HEADERS, retryStateFromHeaders, type RetryState } from '@sluice/envelope';
import type { Kafka } from 'kafkajs';
import { readToEnd } from './bounded-read.ts';
import { DEFAULT_READ_TIMEOUT_MS, REPLAY_HEADERS } from './constants.ts';
import { matchesFilter, validateFilter, type DeadLetterFilter } from './filter.ts';

const RETRY_HEADER_NAMES = new Set<string>(Object.values(RETRY_HEADERS));

/** One dead letter as read from the dead-letter topic. */
export interface DeadLetter {
  partition: number;
  offset: string;
  key: Buffer | null;
  /** The exact webhook body bytes. */
  value: Buffer | null;
  /** Retry state with reason, time of death and the full attempt history. */
  state: RetryState;
  /** Headers that are not retry state (e.g. `sluice-replayed-at` when a replayed event died again). */
  extraHeaders: Record<string, string>;
  /** When this dead letter was last replayed (from the replay markers), if ever. */
  replayedAt?: number;
}

export interface ReadOptions {
  /** Give up reading after this long. Default 30 s. */
  timeoutMs?: number;
}

export interface DeadLetterListing {
  letters: DeadLetter[];
  /** Records on the topic whose retry state could not be read (counted, never fatal). */
  unreadable: number;
}

function headerText(value: unknown): string | undefined {
  const single = Array.isArray(value) ? value[0] : value;
  return single === undefined || single === null ? undefined : String(single);
}

/**
 * Lists the dead letters matching `filter`, oldest first per partition. A bounded read: it stops at
 * the topic's end as of the call, so it never hangs on a live topic.
 */
export async function listDeadLetters(
  kafka: Kafka,
  config: SluiceConfig,
  filter: DeadLetterFilter = {},
  options: ReadOptions = {},
): Promise<DeadLetterListing> {
  validateFilter(filter);
  const records = await readToEnd(kafka, config.kafka.topics.deadLetter, options.timeoutMs ?? DEFAULT_READ_TIMEOUT_MS);
  const replays = new Map<string, number>();
  for (const { message } of records) {
    const of = headerText(message.headers?.[REPLAY_HEADERS.replayOf]);
    if (of !== undefined) replays.set(of, Number(headerText(message.headers?.[REPLAY_HEADERS.replayedAt]) ?? 0));
  }
  const letters: DeadLetter[] = [];
  let unreadable = 0;
  for (const { partition, message } of records) {
    const headers = message.headers ?? {};
    if (headerText(headers[REPLAY_HEADERS.replayOf]) !== undefined) continue;
    let state: RetryState;
    try {
      state = retryStateFromHeaders(headers);
    } catch {
      unreadable += 1;
      continue;
    }
    const extraHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      const text = headerText(value);
      if (text !== undefined && !RETRY_HEADER_NAMES.has(name)) extraHeaders[name] = text;
    }
    const replayedAt = replays.get(`${partition}:${message.offset}`);
    const letter: DeadLetter = {
      partition,
      offset: message.offset,
      key: message.key,
      value: message.value,
      state,
      extraHeaders,
      ...(replayedAt !== undefined && { replayedAt }),
    };
    if (matchesFilter(letter, filter)) letters.push(letter);
  }
  return { letters, unreadable };
}
