/** One `POST` as the client makes it. */
export interface HttpRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Deadline of the attempt; past it the attempt fails like a network error. */
  timeoutMs: number;
}

export interface HttpResponse {
  status: number;
  /** Value of the `Retry-After` header, if any. */
  retryAfter?: string;
  /** Start of the response body (at most 1 KB), for error reports. */
  body: string;
}

/**
 * The client's only door to the network. `send` resolves with any HTTP response, whatever its
 * status, and rejects on a network error or timeout (which the client retries).
 */
export interface HttpTransport {
  send(request: HttpRequest): Promise<HttpResponse>;
  /** Releases connections; called by `Analytics.close()` only for a transport it created. */
  close(): Promise<void>;
}
