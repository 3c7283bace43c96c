export { listDeadLetters } from './list.ts';
export type { DeadLetter, DeadLetterListing, ReadOptions } from './list.ts';
export { replayDeadLetters, replayState } from './replay.ts';
export type { ReplayOptions, ReplayResult } from './replay.ts';
export { matchesFilter, validateFilter } from './filter.ts';
export type { DeadLetterFilter } from './filter.ts';
export { REPLAY_HEADERS, DEFAULT_READ_TIMEOUT_MS } from './constants.ts';
export { DeadLetterError, InvalidFilterError, ReadTimeoutError } from './errors.ts';
