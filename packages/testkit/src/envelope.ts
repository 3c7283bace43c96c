import type { EventEnvelope } from '@sluice/envelope';

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
