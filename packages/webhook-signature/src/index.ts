import { createHmac, timingSafeEqual } from 'node:crypto';

/** The signature header (docs/reference/delivery.md). */
export const SIGNATURE_HEADER = 'X-Signature';

/** Lowercase hex HMAC-SHA1 of the exact body bytes, keyed with the shared secret (docs/reference/delivery.md). */
export function signBody(secret: string, body: Buffer | string): string {
  return createHmac('sha1', secret).update(body).digest('hex');
}

/** What a receiver does: recompute over the bytes received and compare in constant time. */
export function verifySignature(secret: string, body: Buffer | string, signature: string): boolean {
  const expected = Buffer.from(signBody(secret, body), 'utf8');
  const given = Buffer.from(signature.trim().toLowerCase(), 'utf8');
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export { activeKeys, isActive, newestActiveKey, type SigningKey } from './signing-keys.ts';
export {
  signStandardWebhook,
  STANDARD_WEBHOOKS_HEADERS,
  verifyStandardWebhook,
  WEBHOOK_SECRET_BYTES,
  WEBHOOK_SECRET_PREFIX,
  WebhookSecretError,
  webhookSecretKey,
  type StandardWebhookCheck,
  type StandardWebhookFailure,
  type StandardWebhookVerdict,
} from './standard-webhooks.ts';
