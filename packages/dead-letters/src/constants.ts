/** Headers the dead-letter tools write (beside the retry-state headers of `@sluice/envelope`). */
export const REPLAY_HEADERS = {
  /** On a re-injected record and on a replay marker: epoch ms of the replay. */
  replayedAt: 'sluice-replayed-at',
  /**
   * On a replay marker only: `<partition>:<offset>` of the dead letter that was replayed. Markers
   * are value-less records on the dead-letter topic itself, so a second replay can skip them.
   */
  replayOf: 'sluice-replay-of',
} as const;

/** A read of the dead-letter topic fails when no record arrives for this long. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

/** Dead letters re-injected per produce request (then their replay markers). */
export const REPLAY_CHUNK = 500;
