import type { AttemptEvent, EventEnvelope } from '@sluice/envelope';

/**
 * The one event envelope of the tests: a `track` call from source `s` with a fixed timestamp;
 * `over` sets anything else (`userId` defaults to `user-<messageId>`).
 */
export function testEnvelope(over: Partial<EventEnvelope> = {}): EventEnvelope {
  const messageId = over.messageId ?? 'm-1';
  return {
    sourceId: 's',
    type: 'track',
    messageId,
    userId: `user-${messageId}`,
    event: 'Tested',
    properties: {},
    timestamp: '2026-11-21T10:00:00.000Z',
    ...over,
  };
}

/** `testEnvelope(over)` received now: `receivedAt` is the current time, as ingest stamps it. */
export function receivedEnvelope(over: Partial<EventEnvelope> = {}): EventEnvelope {
  return testEnvelope({ receivedAt: new Date().toISOString(), ...over });
}

/**
 * The one attempt record of the tests (the value of a `sluice.attempts` record): attempt 1 of
 * message `m-1` from source `s` to destination `hooks` at `http://127.0.0.1:9/a`, answered 200 in
 * 5 ms; `over` sets anything else. Unless `over` names one, the outcome follows the status as the
 * deliverer's does for the statuses tests send: below 300 `success`, 404 `permanent`, any other
 * `retryable`.
 */
export function testAttempt(over: Partial<AttemptEvent> = {}): AttemptEvent {
  const status = over.status ?? 200;
  return {
    messageId: 'm-1',
    sourceId: 's',
    destinationId: 'hooks',
    eventType: 'track',
    endpoint: 'http://127.0.0.1:9/a',
    attempt: 1,
    outcome: status < 300 ? 'success' : status === 404 ? 'permanent' : 'retryable',
    status,
    latencyMs: 5,
    at: '2026-11-21T10:00:00.000Z',
    ...over,
  };
}
