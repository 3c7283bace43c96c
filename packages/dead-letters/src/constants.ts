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

/** How long a bounded read of the dead-letter topic may take before it gives up. */
export const DEFAULT_READ_TIMEOUT_MS = 30_000;
