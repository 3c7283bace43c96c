import { retryStateToHeaders, type RetryState } from '@sluice/envelope';
import { uniqueName } from '@sluice/testkit';

export function retryState(overrides: Partial<RetryState> = {}): RetryState {
  const now = Date.now();
  return {
    messageId: uniqueName('msg'),
    sourceId: 'src-1',
    destinationId: 'dest-1',
    eventType: 'track',
    endpoints: ['http://127.0.0.1:9/hook'],
    firstAttemptAt: now,
    attempts: 1,
    history: [
      {
        attempt: 1,
        endpoint: 'http://127.0.0.1:9/hook',
        at: now,
        outcome: 'retryable',
        status: 500,
        error: 'http_500',
        latencyMs: 3,
      },
    ],
    ...overrides,
  };
}

export function retryMessage(state: RetryState, body = `{"messageId":"${state.messageId}"}`) {
  return { key: `${state.sourceId}:user-1`, value: Buffer.from(body), headers: retryStateToHeaders(state) };
}
