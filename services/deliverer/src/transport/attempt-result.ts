/** What happened when one attempt was made to one endpoint (docs/reference/delivery.md). */
export type AttemptOutcome = 'success' | 'retryable' | 'permanent';

export interface AttemptResult {
  endpoint: string;
  outcome: AttemptOutcome;
  /** Epoch ms when the request started (after the per-destination slot was taken). */
  at: number;
  latencyMs: number;
  /**
   * The part of `latencyMs` the request waited in this process for a connection of its endpoint's
   * pool (more requests in flight than `delivery.connectionsPerEndpoint`); the whole of it for a
   * request that failed before it got one; absent if never sent.
   */
  connectionWaitMs?: number;
  status?: number;
  /** Stable code of the failure: `http_500`, `timeout`, `ECONNREFUSED`, `ssrf_blocked`… */
  error?: string;
  /** From a `Retry-After` header on a 429/503. */
  retryAfterMs?: number;
  /** First 1 KB of the response body. */
  responseSnippet?: string;
  /** A batch's 2xx answer, for its per-event results; never recorded as it is. */
  answer?: BatchAnswer;
}

/** What a 2xx answer to a batch said (the client reads it only when asked, `WebhookRequest.readAnswer`). */
export interface BatchAnswer {
  contentType?: string;
  /** At most `MAX_BATCH_RESULT_BYTES` of the body (a plain `Uint8Array` after crossing from the webhook thread). */
  body?: Uint8Array;
  /** More than that was sent. */
  truncated: boolean;
}
