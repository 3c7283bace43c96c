import type { SluiceConfig } from '@sluice/config';
import { RETRY_HEADERS, retryStateToHeaders, type RetryState } from '@sluice/envelope';
import { SafeProducer } from '@sluice/kafka';
import type { Kafka, Message } from 'kafkajs';
import { DEFAULT_IDLE_TIMEOUT_MS, REPLAY_CHUNK, REPLAY_HEADERS } from './constants.ts';
import type { DeadLetterFilter } from './filter.ts';
import {
  forEachDeadLetter,
  readReplayIndex,
  toDeadLetter,
  type DeadLetter,
  type ReadOptions,
  type ReplayIndex,
} from './list.ts';
import { scanTopic } from './scan.ts';
import { countIn, emptyTally } from './tally.ts';

export interface PlanOptions extends ReadOptions {
  /**
   * Also replay dead letters that an earlier replay already re-injected. Default false: running
   * the same replay twice by mistake re-injects nothing the second time.
   */
  again?: boolean;
}

/** What a replay would do, counted before anything is written. */
export interface ReplayPlan {
  filter: DeadLetterFilter;
  again: boolean;
  /** Dead letters that matched the filter. */
  matched: number;
  /** Of those, the ones a replay re-injects. */
  toReplay: number;
  /** Matched but skipped because an earlier replay already re-injected them. */
  skippedAlreadyReplayed: number;
  /** Dead letters to replay per destination id, and per dead reason. */
  byDestination: Record<string, number>;
  byReason: Record<string, number>;
  /** Earliest and latest time of death among the dead letters to replay (epoch ms). */
  firstDeadAt?: number;
  lastDeadAt?: number;
  /** Records whose retry state could not be read (never replayed). */
  unreadable: number;
  /** The replay reads exactly what the plan read. */
  index: ReplayIndex;
}

export interface ReplayOptions extends ReadOptions {
  /** Go through the dead letters a replay would re-inject, write nothing. Default false. */
  dryRun?: boolean;
  /** Length of the fresh window in ms; default: the configured `retry.window`. */
  windowMs?: number;
  /** Injected for tests; default `Date.now`. */
  now?: () => number;
  /** Called with each dead letter as it is (or, on a dry run, would be) replayed. */
  onLetter?: (letter: DeadLetter) => void | Promise<void>;
}

export interface ReplayResult {
  /** Dead letters that matched the filter. */
  matched: number;
  /** Re-injected onto the redeliver topic (0 on a dry run). */
  replayed: number;
  /** Matched but skipped because an earlier replay already re-injected them. */
  skippedAlreadyReplayed: number;
  dryRun: boolean;
}

const RETRY_HEADER_NAMES = new Set<string>(Object.values(RETRY_HEADERS));

/**
 * The state a replayed event starts with: a fresh window from now (`firstAttemptAt` = now), due at
 * once, the attempt counter reset so the backoff schedule starts again at its first step, and the
 * full history kept (attempt numbers in it restart after a replay; the `sluice-replayed-at` header
 * tells the runs apart).
 */
export function replayState(state: RetryState, now: number, windowMs?: number): RetryState {
  const { deadReason: _r, deadAt: _d, retryAfterMs: _ra, windowMs: _w, lastError: _e, ...rest } = state;
  return { ...rest, firstAttemptAt: now, attempts: 0, dueAt: now, ...(windowMs !== undefined && { windowMs }) };
}

function replayMessage(letter: DeadLetter, now: number, windowMs?: number): Message {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(letter.extraHeaders))
    if (!RETRY_HEADER_NAMES.has(name)) headers[name] = value;
  Object.assign(headers, retryStateToHeaders(replayState(letter.state, now, windowMs)), {
    [REPLAY_HEADERS.replayedAt]: String(now),
  });
  return { key: letter.key, value: letter.value, headers };
}

/** Re-injects `letters` on the redeliver topic, then marks each replayed on the dead-letter topic. */
async function reinject(
  producer: SafeProducer,
  config: SluiceConfig,
  letters: DeadLetter[],
  now: number,
  windowMs: number | undefined,
): Promise<void> {
  const { redeliver, deadLetter } = config.kafka.topics;
  await producer.send(
    redeliver,
    letters.map((l) => replayMessage(l, now, windowMs)),
  );
  await producer.send(
    deadLetter,
    letters.map((l) => markerMessage(l, now)),
  );
}

function markerMessage(letter: DeadLetter, now: number): Message {
  return {
    key: letter.key,
    value: null,
    partition: letter.partition,
    headers: {
      [REPLAY_HEADERS.replayOf]: `${letter.partition}:${letter.offset}`,
      [REPLAY_HEADERS.replayedAt]: String(now),
    },
  };
}

/**
 * Counts what a replay of `filter` would re-inject, by destination and reason, without writing.
 * Reads the topic twice (replay markers, then dead letters), one record at a time.
 */
export async function planReplay(
  kafka: Kafka,
  config: SluiceConfig,
  filter: DeadLetterFilter,
  options: PlanOptions = {},
): Promise<ReplayPlan> {
  const again = options.again ?? false;
  const index = await readReplayIndex(kafka, config, options);
  const plan: ReplayPlan = {
    filter,
    again,
    matched: 0,
    toReplay: 0,
    skippedAlreadyReplayed: 0,
    byDestination: emptyTally(),
    byReason: emptyTally(),
    unreadable: 0,
    index,
  };
  const { unreadable } = await forEachDeadLetter(
    kafka,
    config,
    filter,
    (letter) => {
      plan.matched += 1;
      if (!again && letter.replayedAt !== undefined) {
        plan.skippedAlreadyReplayed += 1;
        return;
      }
      plan.toReplay += 1;
      countIn(plan.byDestination, letter.state.destinationId);
      countIn(plan.byReason, letter.state.deadReason ?? 'unknown');
      const deadAt = letter.state.deadAt;
      if (deadAt !== undefined) {
        plan.firstDeadAt = Math.min(plan.firstDeadAt ?? deadAt, deadAt);
        plan.lastDeadAt = Math.max(plan.lastDeadAt ?? deadAt, deadAt);
      }
    },
    { ...options, index },
  );
  plan.unreadable = unreadable;
  return plan;
}

/**
 * Carries out a plan: re-injects its dead letters onto `sluice.redeliver` with a fresh window
 * (docs/reference/retries.md), `REPLAY_CHUNK` at a time, each chunk followed by one replay marker
 * per letter on the dead-letter topic so a repeated replay skips them (unless `again`). The
 * markers are written after the re-injection is acknowledged: a crash in between can replay that
 * chunk once more on the next run. Reads the same records as the plan; holds one chunk in memory.
 */
export async function executeReplay(
  kafka: Kafka,
  config: SluiceConfig,
  plan: ReplayPlan,
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  const dryRun = options.dryRun ?? false;
  const { matched, skippedAlreadyReplayed } = plan;
  const result: ReplayResult = { matched, replayed: 0, skippedAlreadyReplayed, dryRun };
  if (plan.toReplay === 0) return result;
  const now = (options.now ?? Date.now)();
  const producer = dryRun ? undefined : new SafeProducer(kafka);
  let chunk: DeadLetter[] = [];
  const flush = async () => {
    if (chunk.length === 0 || producer === undefined) return;
    await reinject(producer, config, chunk, now, options.windowMs);
    result.replayed += chunk.length;
    chunk = [];
  };
  await producer?.connect();
  try {
    await forEachDeadLetter(
      kafka,
      config,
      plan.filter,
      async (letter) => {
        if (!plan.again && letter.replayedAt !== undefined) return;
        await options.onLetter?.(letter);
        if (producer === undefined) return;
        chunk.push(letter);
        if (chunk.length >= REPLAY_CHUNK) await flush();
      },
      { ...options, index: plan.index },
    );
    await flush();
  } finally {
    await producer?.disconnect();
  }
  return result;
}

/** Where one dead letter is on the dead-letter topic. */
export interface DeadLetterAt {
  partition: number;
  offset: string;
}

export interface PositionsResult {
  /** Re-injected onto the redeliver topic. */
  replayed: DeadLetterAt[];
  /** Not on the topic any more (past its retention) or not a dead letter: nothing re-injected. */
  missing: number;
  /** Records read from the topic: from the first named offset to the last of each partition. */
  read: number;
}

/**
 * Re-injects the dead letters at `positions` (from an index such as the delivery log's) exactly as
 * `executeReplay` does (fresh window, a replay marker after each chunk), reading only those
 * records: each partition from its first named offset to its last, not the whole topic.
 */
export async function replayPositions(
  kafka: Kafka,
  config: SluiceConfig,
  positions: readonly DeadLetterAt[],
  options: Omit<ReplayOptions, 'dryRun' | 'onLetter'> = {},
): Promise<PositionsResult> {
  const result: PositionsResult = { replayed: [], missing: 0, read: 0 };
  if (positions.length === 0) return result;
  const wanted = new Set(positions.map((p) => `${p.partition}:${p.offset}`));
  const starts = new Map<number, bigint>();
  const ends = new Map<number, bigint>();
  for (const p of positions) {
    const offset = BigInt(p.offset);
    if (offset < (starts.get(p.partition) ?? offset + 1n)) starts.set(p.partition, offset);
    if (offset + 1n > (ends.get(p.partition) ?? 0n)) ends.set(p.partition, offset + 1n);
  }
  const now = (options.now ?? Date.now)();
  const producer = new SafeProducer(kafka);
  let chunk: DeadLetter[] = [];
  const flush = async () => {
    if (chunk.length === 0) return;
    await reinject(producer, config, chunk, now, options.windowMs);
    result.replayed.push(...chunk.map((l) => ({ partition: l.partition, offset: l.offset })));
    chunk = [];
  };
  await producer.connect();
  try {
    const scan = await scanTopic(
      kafka,
      config.kafka.topics.deadLetter,
      async (record) => {
        if (!wanted.has(`${record.partition}:${record.message.offset}`)) return;
        const letter = toDeadLetter(record, new Map());
        if (letter === undefined || letter === 'unreadable') return;
        chunk.push(letter);
        if (chunk.length >= REPLAY_CHUNK) await flush();
      },
      { starts, ends, idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS },
    );
    await flush();
    result.read = scan.read;
  } finally {
    await producer.disconnect();
  }
  result.missing = positions.length - result.replayed.length;
  return result;
}

/** `planReplay` then `executeReplay`: re-injects the dead letters matching `filter` (see both). */
export async function replayDeadLetters(
  kafka: Kafka,
  config: SluiceConfig,
  filter: DeadLetterFilter = {},
  options: ReplayOptions & PlanOptions = {},
): Promise<ReplayResult> {
  return executeReplay(kafka, config, await planReplay(kafka, config, filter, options), options);
}
