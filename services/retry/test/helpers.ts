import { retryStateToHeaders, type RetryState } from '@sluice/envelope';
import { testRetryState } from '@sluice/testkit';

/** A retry state of the retry tests: `testRetryState` sent from `src-1` to `dest-1` at an endpoint that refuses. */
export const retryState = (over: Partial<RetryState> = {}): RetryState =>
  testRetryState({ sourceId: 'src-1', destinationId: 'dest-1', endpoints: ['http://127.0.0.1:9/hook'], ...over });

export function retryMessage(state: RetryState, body = `{"messageId":"${state.messageId}"}`) {
  return { key: `${state.sourceId}:user-1`, value: Buffer.from(body), headers: retryStateToHeaders(state) };
}
