import { DeliveryError, INVALID_REQUEST_CODE } from '@sluice/webhook';
import type { AttemptOutcome } from './attempt-result.ts';
import { parseRetryAfter } from './retry-after.ts';

export interface Classification {
  outcome: AttemptOutcome;
  error?: string;
  retryAfterMs?: number;
}

/**
 * An HTTP answer (docs/reference/delivery.md): any 2xx delivers; 5xx, 408 and 429 are retried (429/503 with their
 * `Retry-After`); every other status — 1xx, 3xx (redirects are never followed), other 4xx — is
 * permanent.
 */
export function classifyStatus(status: number, retryAfter: string | string[] | undefined, now: number): Classification {
  if (status >= 200 && status < 300) return { outcome: 'success' };
  const error = `http_${status}`;
  if (status >= 500 || status === 408 || status === 429) {
    const retryAfterMs = status === 429 || status === 503 ? parseRetryAfter(retryAfter, now) : undefined;
    return { outcome: 'retryable', error, ...(retryAfterMs !== undefined && { retryAfterMs }) };
  }
  return { outcome: 'permanent', error };
}

/**
 * Codes of certificate and handshake failures (node's `tls` and OpenSSL). A TLS failure is
 * permanent: the certificate will not become trusted by retrying, and no request was sent.
 */
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'INVALID_CA',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

export function isTlsErrorCode(code: string): boolean {
  return TLS_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_');
}

/**
 * Codes of errors thrown while a request is being built, before anything is sent: undici's
 * `InvalidArgumentError` (`UND_ERR_INVALID_ARG`, e.g. a header value with a line break) and Node's
 * own header checks. The request itself is wrong, not the endpoint: sending it again fails the same way.
 */
const REQUEST_CONSTRUCTION_CODES = new Set([
  'UND_ERR_INVALID_ARG',
  'ERR_INVALID_CHAR',
  'ERR_HTTP_INVALID_HEADER_VALUE',
  'ERR_INVALID_HTTP_TOKEN',
]);

/**
 * A request that got no HTTP answer. Sluice's own errors carry their class; TLS failures are
 * permanent; a request that could not be built is permanent as `invalid_request` (a local fault:
 * the endpoint's breaker does not count it, `endpoint-gate.ts`); everything else from the network
 * (refused, reset, DNS, socket closed, undici timeouts, unknown) is retryable, so a transient fault
 * never loses an event.
 */
export function classifyError(err: unknown): Classification {
  if (err instanceof DeliveryError) return { outcome: err.retryable ? 'retryable' : 'permanent', error: err.code };
  const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : 'network_error';
  if (isTlsErrorCode(code)) return { outcome: 'permanent', error: code };
  if (REQUEST_CONSTRUCTION_CODES.has(code)) return { outcome: 'permanent', error: INVALID_REQUEST_CODE };
  return { outcome: 'retryable', error: code };
}
