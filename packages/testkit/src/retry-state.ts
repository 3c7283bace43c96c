import type { RetryState } from '@sluice/envelope';
import { uniqueName } from './names.ts';

/**
 * The one retry state of the tests: a `track` event of `src-a` for `dest-a` whose first attempt
 * (at `firstAttemptAt`, default now) answered 500, with a fresh message id; `over` sets the rest.
 */
export function testRetryState(over: Partial<RetryState> = {}): RetryState {
  const at = over.firstAttemptAt ?? Date.now();
  const endpoint = over.endpoints?.[0] ?? 'https://a.example/hook';
  return {
    messageId: uniqueName('m'),
    sourceId: 'src-a',
    destinationId: 'dest-a',
    eventType: 'track',
    endpoints: [endpoint],
    firstAttemptAt: at,
    attempts: 1,
    history: [{ attempt: 1, endpoint, at, outcome: 'retryable', status: 500, error: 'http_500', latencyMs: 3 }],
    ...over,
  };
}

/** A dead letter: `testRetryState` after five attempts, dead at `firstAttemptAt` + 4 h (window exhausted). */
export function testDeadLetter(over: Partial<RetryState> = {}, firstAttemptAt = 1_700_000_000_000): RetryState {
  const endpoint = over.endpoints?.[0] ?? 'https://a.example/hook';
  return testRetryState({
    firstAttemptAt,
    attempts: 5,
    history: [
      { attempt: 5, endpoint, at: firstAttemptAt + 14_000_000, outcome: 'retryable', status: 500, latencyMs: 4 },
    ],
    deadReason: 'window_exhausted',
    deadAt: firstAttemptAt + 14_400_000,
    windowMs: 7_200_000,
    lastError: 'http_500',
    ...over,
  });
}
