import type { SluiceConfig } from '@sluice/config';
import { RETRY_HEADERS, retryStateFromHeaders, type RetryState } from '@sluice/envelope';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { DEFAULT_IDLE_TIMEOUT_MS, REPLAY_HEADERS } from './constants.ts';
import { matchesFilter, validateFilter, type DeadLetterFilter } from './filter.ts';
import { scanTopic, type ScanEnds, type ScanProgress, type ScanRecord } from './scan.ts';

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

/** Which pass of a read is running: the replay markers first, then the dead letters. */
export type ReadPhase = 'replay-markers' | 'dead-letters';

export interface ReadOptions {
  /** Fail when no record arrives for this long. Default 30 s. */
  idleTimeoutMs?: number;
  /** Called after each record read, with the pass it belongs to. */
  onProgress?: (phase: ReadPhase, progress: ScanProgress) => void;
}

/**
 * What a first pass over the topic learnt: when each replayed dead letter was replayed, and where
 * the topic ended. A later pass with the same index reads exactly the same records.
 */
export interface ReplayIndex {
  /** `partition:offset` of a dead letter → epoch ms of its last replay. */
  replays: ReadonlyMap<string, number>;
  ends: ScanEnds;
}

export interface ForEachOptions extends ReadOptions {
  /** Stop after this many matching dead letters. */
  limit?: number;
  /** From an earlier pass; read first when absent. */
  index?: ReplayIndex;
}

export interface ForEachSummary {
  /** Dead letters that matched the filter and were handed to the callback. */
  matched: number;
  /** Records on the topic whose retry state could not be read (counted, never fatal). */
  unreadable: number;
  /** True when `limit` stopped the read before the end of the topic. */
  limited: boolean;
  index: ReplayIndex;
}

export interface DeadLetterListing {
  letters: DeadLetter[];
  unreadable: number;
}

function headerText(value: unknown): string | undefined {
  const single = Array.isArray(value) ? value[0] : value;
  return single === undefined || single === null ? undefined : String(single);
}

function replayMarkerOf(message: KafkaMessage): string | undefined {
  return headerText(message.headers?.[REPLAY_HEADERS.replayOf]);
}

/**
 * First pass: the replay markers (value-less records naming a replayed dead letter). They sit after
 * the dead letter they name, so a dead letter's replay is known only once its partition has been
 * read to the end. Memory: one entry per replayed dead letter.
 */
export async function readReplayIndex(
  kafka: Kafka,
  config: SluiceConfig,
  options: ReadOptions = {},
): Promise<ReplayIndex> {
  const replays = new Map<string, number>();
  const { ends } = await scanTopic(
    kafka,
    config.kafka.topics.deadLetter,
    ({ message }) => {
      const of = replayMarkerOf(message);
      if (of !== undefined) replays.set(of, Number(headerText(message.headers?.[REPLAY_HEADERS.replayedAt]) ?? 0));
    },
    {
      idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      ...(options.onProgress && { onProgress: (p: ScanProgress) => options.onProgress!('replay-markers', p) }),
    },
  );
  return { replays, ends };
}

/** A record as a dead letter; `undefined` for a replay marker; `'unreadable'` without a valid retry state. */
export function toDeadLetter(
  { partition, message }: ScanRecord,
  replays: ReadonlyMap<string, number>,
): DeadLetter | 'unreadable' | undefined {
  if (replayMarkerOf(message) !== undefined) return undefined;
  const headers = message.headers ?? {};
  let state: RetryState;
  try {
    state = retryStateFromHeaders(headers);
  } catch {
    return 'unreadable';
  }
  const extraHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const text = headerText(value);
    if (text !== undefined && !RETRY_HEADER_NAMES.has(name)) extraHeaders[name] = text;
  }
  const replayedAt = replays.get(`${partition}:${message.offset}`);
  return {
    partition,
    offset: message.offset,
    key: message.key,
    value: message.value,
    state,
    extraHeaders,
    ...(replayedAt !== undefined && { replayedAt }),
  };
}

/**
 * Hands each dead letter matching `filter` to `onLetter` as it is read (oldest first within each
 * partition), never holding more than one in memory: a first pass reads the replay markers (unless
 * `options.index` is given), a second the dead letters, both up to the topic's end as of the first.
 */
export async function forEachDeadLetter(
  kafka: Kafka,
  config: SluiceConfig,
  filter: DeadLetterFilter,
  onLetter: (letter: DeadLetter) => void | Promise<void>,
  options: ForEachOptions = {},
): Promise<ForEachSummary> {
  validateFilter(filter);
  const index = options.index ?? (await readReplayIndex(kafka, config, options));
  const summary: ForEachSummary = { matched: 0, unreadable: 0, limited: false, index };
  if (options.limit !== undefined && options.limit <= 0) return { ...summary, limited: true };
  const scan = await scanTopic(
    kafka,
    config.kafka.topics.deadLetter,
    async (record) => {
      const letter = toDeadLetter(record, index.replays);
      if (letter === 'unreadable') summary.unreadable += 1;
      if (letter === undefined || letter === 'unreadable' || !matchesFilter(letter, filter)) return;
      summary.matched += 1;
      await onLetter(letter);
      if (options.limit !== undefined && summary.matched >= options.limit) return false;
    },
    {
      ends: index.ends,
      idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      ...(options.onProgress && { onProgress: (p: ScanProgress) => options.onProgress!('dead-letters', p) }),
    },
  );
  summary.limited = scan.stopped;
  return summary;
}

/**
 * Lists the dead letters matching `filter`, oldest first per partition, in one array: for a topic of
 * any size prefer `forEachDeadLetter`, which holds one at a time.
 */
export async function listDeadLetters(
  kafka: Kafka,
  config: SluiceConfig,
  filter: DeadLetterFilter = {},
  options: ForEachOptions = {},
): Promise<DeadLetterListing> {
  const letters: DeadLetter[] = [];
  const { unreadable } = await forEachDeadLetter(kafka, config, filter, (letter) => void letters.push(letter), options);
  letters.sort((a, b) => a.partition - b.partition || Number(BigInt(a.offset) - BigInt(b.offset)));
  return { letters, unreadable };
}
