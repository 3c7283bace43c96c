/** What happened when one attempt was made to one endpoint (docs/reference/delivery.md). */
export type AttemptOutcome = 'success' | 'retryable' | 'permanent';

export interface AttemptResult {
  endpoint: string;
  outcome: AttemptOutcome;
  /** Epoch ms when the request started (after the per-destination slot was taken). */
  at: number;
  latencyMs: number;
  status?: number;
  /** Stable code of the failure: `http_500`, `timeout`, `ECONNREFUSED`, `ssrf_blocked`… */
  error?: string;
  /** From a `Retry-After` header on a 429/503. */
  retryAfterMs?: number;
  /** First 1 KB of the response body. */
  responseSnippet?: string;
}
