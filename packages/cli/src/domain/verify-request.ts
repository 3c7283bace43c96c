import {
  verifySignature,
  verifyStandardWebhook,
  WebhookSecretError,
  type StandardWebhookFailure,
} from '@sluice/webhook-signature';

/** The signature schemes `sluice verify` checks (docs/receiving-webhooks.md). */
export const VERIFY_SCHEMES = ['x-signature', 'standard-webhooks'] as const;
export type VerifyScheme = (typeof VERIFY_SCHEMES)[number];

/** How far a `webhook-timestamp` may be from the clock by default, either way: 5 minutes. */
export const DEFAULT_TOLERANCE_MS = 5 * 60_000;

export interface VerifyRequest {
  /** Default: `standard-webhooks` when the signature starts with `v1,`, else `x-signature`. */
  scheme?: VerifyScheme;
  /** The X-Signature shared secret, or a `whsec_` secret for Standard Webhooks. */
  secret: string;
  /** The `X-Signature` or `webhook-signature` header value. */
  signature: string;
  /** `webhook-id` and `webhook-timestamp` (Standard Webhooks only). */
  id?: string;
  timestamp?: string;
  toleranceMs: number;
  nowMs: number;
  body: Buffer;
}

export type VerifyOutcome = { ok: true; scheme: VerifyScheme } | { ok: false; scheme: VerifyScheme; problem: string };

const PROBLEMS: Record<StandardWebhookFailure, string> = {
  missing_headers: 'standard-webhooks needs --webhook-id, --webhook-timestamp and --signature',
  bad_timestamp: 'webhook-timestamp is not whole Unix seconds',
  too_old: 'webhook-timestamp is older than the tolerance',
  too_new: 'webhook-timestamp is further in the future than the tolerance',
  no_matching_signature: 'no signature matches',
};

/** A hex X-Signature never holds a comma; every Standard Webhooks signature starts with a version. */
export function schemeOf(signature: string): VerifyScheme {
  return /^v1a?,/.test(signature.trim()) ? 'standard-webhooks' : 'x-signature';
}

/** Checks one received request against one secret, the way a receiver does. */
export function verifyRequest(request: VerifyRequest): VerifyOutcome {
  const scheme = request.scheme ?? schemeOf(request.signature);
  if (scheme === 'x-signature') {
    const ok = verifySignature(request.secret, request.body, request.signature);
    return ok ? { ok, scheme } : { ok, scheme, problem: 'no signature matches' };
  }
  try {
    const verdict = verifyStandardWebhook({
      secrets: [request.secret],
      id: request.id,
      timestamp: request.timestamp,
      signature: request.signature,
      body: request.body,
      nowMs: request.nowMs,
      toleranceSeconds: Math.floor(request.toleranceMs / 1_000),
    });
    return verdict.ok ? { ok: true, scheme } : { ok: false, scheme, problem: PROBLEMS[verdict.reason] };
  } catch (err) {
    if (err instanceof WebhookSecretError) return { ok: false, scheme, problem: `--secret ${err.message}` };
    throw err;
  }
}
