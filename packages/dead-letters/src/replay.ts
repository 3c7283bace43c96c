import type { SluiceConfig } from '@sluice/config';
import { RETRY_HEADERS, retryStateToHeaders, type RetryState } from '@sluice/envelope';
import { SafeProducer } from '@sluice/kafka';
import type { Kafka, Message } from 'kafkajs';
import { REPLAY_HEADERS } from './constants.ts';
import type { DeadLetterFilter } from './filter.ts';
import { listDeadLetters, type DeadLetter, type ReadOptions } from './list.ts';

export interface ReplayOptions extends ReadOptions {
  /** List what would be replayed, write nothing. Default false. */
  dryRun?: boolean;
  /**
   * Also replay dead letters that an earlier replay already re-injected. Default false: running
   * the same replay twice by mistake re-injects nothing the second time.
   */
  again?: boolean;
  /** Length of the fresh window in ms; default: the configured `retry.window`. */
  windowMs?: number;
  /** Injected for tests; default `Date.now`. */
  now?: () => number;
}

export interface ReplayResult {
  /** Dead letters that matched the filter. */
  matched: number;
  /** Re-injected onto the redeliver topic (0 on a dry run). */
  replayed: number;
  /** Matched but skipped because an earlier replay already re-injected them. */
  skippedAlreadyReplayed: number;
  dryRun: boolean;
  /** The letters that were (or, on a dry run, would be) replayed. */
  letters: DeadLetter[];
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
 * Re-injects the dead letters matching `filter` onto `sluice.redeliver` with a fresh window
 * (SPEC §7), then records one replay marker per letter on the dead-letter topic so a repeated
 * replay skips them (unless `again`). The markers are written after the re-injection is
 * acknowledged: a crash in between can replay those letters once more on the next run.
 */
export async function replayDeadLetters(
  kafka: Kafka,
  config: SluiceConfig,
  filter: DeadLetterFilter = {},
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  const { letters: matched } = await listDeadLetters(kafka, config, filter, options);
  const toReplay = options.again ? matched : matched.filter((l) => l.replayedAt === undefined);
  const result: ReplayResult = {
    matched: matched.length,
    replayed: 0,
    skippedAlreadyReplayed: matched.length - toReplay.length,
    dryRun: options.dryRun ?? false,
    letters: toReplay,
  };
  if (result.dryRun || toReplay.length === 0) return result;
  const now = (options.now ?? Date.now)();
  const producer = new SafeProducer(kafka);
  await producer.connect();
  try {
    const { redeliver, deadLetter } = config.kafka.topics;
    await producer.send(
      redeliver,
      toReplay.map((l) => replayMessage(l, now, options.windowMs)),
    );
    await producer.send(
      deadLetter,
      toReplay.map((l) => markerMessage(l, now)),
    );
  } finally {
    await producer.disconnect();
  }
  result.replayed = toReplay.length;
  return result;
}
