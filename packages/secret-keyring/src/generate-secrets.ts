import { randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '@sluice/webhook-signature';
import { GENERATED_SECRET_BYTES } from './constants.ts';

/**
 * A new Standard Webhooks secret: `whsec_` and the standard base64 (with padding) of 32 random
 * bytes, the form the config accepts for `signing.standardWebhooks.secrets[].secret`.
 */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(GENERATED_SECRET_BYTES).toString('base64')}`;
}

/** A new X-Signature secret: 32 random bytes as 64 lowercase hex characters (its UTF-8 bytes key the HMAC). */
export function generateSharedSecret(): string {
  return randomBytes(GENERATED_SECRET_BYTES).toString('hex');
}
