import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The Standard Webhooks signature scheme, symmetric variant (`v1`): HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the bytes of a `whsec_` secret,
 * sent base64-encoded as `v1,<signature>`; several signatures are space-separated.
 */
export const STANDARD_WEBHOOKS_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** Key length the specification asks for: at least 24 random bytes, at most 64. */
export const WEBHOOK_SECRET_BYTES = { min: 24, max: 64 } as const;

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A `whsec_` secret that is not the prefix followed by the base64 of 24–64 bytes. */
export class WebhookSecretError extends Error {
  readonly code = 'webhook_secret_invalid';
  constructor(problem: string) {
    super(problem);
    this.name = 'WebhookSecretError';
  }
}

/** The key bytes of a `whsec_` secret; throws `WebhookSecretError` saying what is wrong (never the secret). */
export function webhookSecretKey(secret: string): Buffer {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    throw new WebhookSecretError(`must start with ${WEBHOOK_SECRET_PREFIX}`);
  }
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (encoded.length === 0 || !BASE64.test(encoded)) {
    const problem = `must be ${WEBHOOK_SECRET_PREFIX} followed by standard base64 (A-Z a-z 0-9 + /, = padding)`;
    throw new WebhookSecretError(problem);
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length < WEBHOOK_SECRET_BYTES.min || key.length > WEBHOOK_SECRET_BYTES.max) {
    throw new WebhookSecretError(
      `must encode ${WEBHOOK_SECRET_BYTES.min} to ${WEBHOOK_SECRET_BYTES.max} random bytes, got ${key.length}`,
    );
  }
  return key;
}

/** One `v1,<base64>` signature of `id.timestamp.body` (timestamp in whole Unix seconds). */
export function signStandardWebhook(key: Buffer, id: string, timestampSeconds: number, body: Buffer | string): string {
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.`).update(body);
  return `v1,${mac.digest('base64')}`;
}

/** Why a Standard Webhooks request did not verify. */
export type StandardWebhookFailure =
  | 'missing_headers'
  | 'bad_timestamp'
  | 'too_old'
  | 'too_new'
  | 'no_matching_signature';

export type StandardWebhookVerdict = { ok: true } | { ok: false; reason: StandardWebhookFailure };

export interface StandardWebhookCheck {
  /** `whsec_` secrets the receiver trusts; any one matching any signature is enough. */
  secrets: readonly string[];
  id: string | undefined;
  timestamp: string | undefined;
  /** The `webhook-signature` header: space-separated `v1,<base64>` entries (others are ignored). */
  signature: string | undefined;
  body: Buffer | string;
  /** The receiver's clock, in milliseconds. */
  nowMs: number;
  /** How far the timestamp may be from `nowMs`, either way, in seconds. */
  toleranceSeconds: number;
}

/** What a receiver does: check the timestamp window, then compare every `v1` entry in constant time. */
export function verifyStandardWebhook(check: StandardWebhookCheck): StandardWebhookVerdict {
  const { id, timestamp, signature } = check;
  if (!id || !timestamp || !signature) return { ok: false, reason: 'missing_headers' };
  if (!/^\d{1,15}$/.test(timestamp)) return { ok: false, reason: 'bad_timestamp' };
  const seconds = Number(timestamp);
  const now = Math.floor(check.nowMs / 1_000);
  if (now - seconds > check.toleranceSeconds) return { ok: false, reason: 'too_old' };
  if (seconds - now > check.toleranceSeconds) return { ok: false, reason: 'too_new' };
  const given = signature
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'utf8'));
  for (const secret of check.secrets) {
    const signed = signStandardWebhook(webhookSecretKey(secret), id, seconds, check.body);
    const expected = Buffer.from(signed.slice(3), 'utf8');
    if (given.some((g) => g.length === expected.length && timingSafeEqual(g, expected))) return { ok: true };
  }
  return { ok: false, reason: 'no_matching_signature' };
}
