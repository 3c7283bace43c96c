import { redactUrl } from '@sluice/logging';
import { CodedError } from '@sluice/errors';

/** Base of every error of a webhook request: a stable `code` and whether retrying may help (docs/CONVENTIONS.md). */
export class WebhookError extends CodedError {}

/**
 * Every failure of a delivery attempt has a stable `code` (written to `sluice.attempts` and the
 * retry history) and a `retryable` flag (docs/reference/delivery.md). Raw errors from the network
 * stack are mapped onto these codes by the deliverer's `classifyError`.
 */
export abstract class DeliveryError extends WebhookError {}

/** The `code` of a request that got no answer within its deadline. */
export const TIMEOUT_CODE = 'timeout';

/** The one deadline for connect + response passed (docs/reference/delivery.md: 5 s by default). */
export class DeliveryTimeoutError extends DeliveryError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(TIMEOUT_CODE, `no response within ${timeoutMs} ms`, true);
    this.timeoutMs = timeoutMs;
  }
}

/** The SSRF guard refused the address the endpoint resolved to (docs/reference/security.md). Never retried. */
export class SsrfBlockedError extends DeliveryError {
  readonly address: string;
  readonly range: string;
  constructor(address: string, range: string) {
    super(
      'ssrf_blocked',
      `refusing to connect to ${address} (${range} address; not in delivery.ssrf.allowCidrs)`,
      false,
    );
    this.address = address;
    this.range = range;
  }
}

/** The endpoint URL cannot be requested (not http/https, unparsable). Never retried. */
export class InvalidEndpointUrlError extends DeliveryError {
  constructor(url: string) {
    super('invalid_url', `endpoint URL ${JSON.stringify(redactUrl(url))} is not a valid http or https URL`, false);
  }
}

/**
 * The `code` of a request that could not be built and was never sent (an argument error of the HTTP
 * client: a header value with a control character, an invalid header name; `classifyError`). The
 * deliverer's fault, never the endpoint's: permanent, and not counted by the endpoint's breaker.
 */
export const INVALID_REQUEST_CODE = 'invalid_request';

/** The configured CA bundle (`delivery.caFile`) cannot be read. */
export class CaFileError extends WebhookError {
  constructor(path: string, cause: Error) {
    super('ca_file_unreadable', `cannot read delivery.caFile ${path}: ${cause.message}`, false, { cause });
  }
}
