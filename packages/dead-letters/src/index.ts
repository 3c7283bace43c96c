export {
  forEachDeadLetter,
  listDeadLetters,
  readReplayIndex,
  type DeadLetter,
  type DeadLetterListing,
  type ForEachOptions,
  type ForEachSummary,
  type ReadOptions,
  type ReadPhase,
  type ReplayIndex,
} from './list.ts';
export {
  executeReplay,
  planReplay,
  replayDeadLetters,
  replayPositions,
  replayState,
  type DeadLetterAt,
  type PlanOptions,
  type PositionsResult,
  type ReplayOptions,
  type ReplayPlan,
  type ReplayResult,
} from './replay.ts';
export { matchesFilter, validateFilter, type DeadLetterFilter } from './filter.ts';
export type { ScanProgress } from './scan.ts';
export { REPLAY_HEADERS, DEFAULT_IDLE_TIMEOUT_MS, REPLAY_CHUNK } from './constants.ts';
export { DeadLetterError, InvalidFilterError, ReadTimeoutError } from './errors.ts';
