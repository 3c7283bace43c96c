import { redactUrl } from '@sluice/logging';

/**
 * Every failure of a delivery attempt has a stable `code` (written to `sluice.attempts` and the
 * retry history) and a `retryable` flag (docs/reference/delivery.md). Raw errors from the network stack are mapped
 * onto these codes by `classifyError` in `domain/classify.ts`.
 */
export abstract class DeliveryError extends Error {
  abstract readonly code: string;
  abstract readonly retryable: boolean;
}

/** The `code` of a request that got no answer within its deadline. */
export const TIMEOUT_CODE = 'timeout';

/** The one deadline for connect + response passed (docs/reference/delivery.md: 5 s by default). */
export class DeliveryTimeoutError extends DeliveryError {
  readonly code = TIMEOUT_CODE;
  readonly retryable = true;
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`no response within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/** The SSRF guard refused the address the endpoint resolved to (docs/reference/security.md). Never retried. */
export class SsrfBlockedError extends DeliveryError {
  readonly code = 'ssrf_blocked';
  readonly retryable = false;
  readonly address: string;
  readonly range: string;
  constructor(address: string, range: string) {
    super(`refusing to connect to ${address} (${range} address; not in delivery.ssrf.allowCidrs)`);
    this.address = address;
    this.range = range;
  }
}

/** The endpoint URL cannot be requested (not http/https, unparsable). Never retried. */
export class InvalidEndpointUrlError extends DeliveryError {
  readonly code = 'invalid_url';
  readonly retryable = false;
  constructor(url: string) {
    super(`endpoint URL ${JSON.stringify(redactUrl(url))} is not a valid http or https URL`);
  }
}

/** The configured CA bundle (`delivery.caFile`) cannot be read. */
export class CaFileError extends Error {
  readonly code = 'ca_file_unreadable';
  constructor(path: string, cause: Error) {
    super(`cannot read delivery.caFile ${path}: ${cause.message}`, { cause });
  }
}
