export { forEachDeadLetter, listDeadLetters, readReplayIndex } from './list.ts';
export type {
  DeadLetter,
  DeadLetterListing,
  ForEachOptions,
  ForEachSummary,
  ReadOptions,
  ReadPhase,
  ReplayIndex,
} from './list.ts';
export { executeReplay, planReplay, replayDeadLetters, replayPositions, replayState } from './replay.ts';
export type {
  DeadLetterAt,
  PlanOptions,
  PositionsResult,
  ReplayOptions,
  ReplayPlan,
  ReplayResult,
} from './replay.ts';
export { matchesFilter, validateFilter } from './filter.ts';
export type { DeadLetterFilter } from './filter.ts';
export type { ScanProgress } from './scan.ts';
export { REPLAY_HEADERS, DEFAULT_IDLE_TIMEOUT_MS, REPLAY_CHUNK } from './constants.ts';
export { DeadLetterError, InvalidFilterError, ReadTimeoutError } from './errors.ts';
