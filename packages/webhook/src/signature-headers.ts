import type { DestinationSigning } from '@sluice/config';
import {
  activeKeys,
  newestActiveKey,
  SIGNATURE_HEADER,
  signBody,
  signStandardWebhook,
  STANDARD_WEBHOOKS_HEADERS,
  webhookSecretKey,
} from '@sluice/webhook-signature';

/**
 * The signature headers of one attempt (docs/deliverer.md, "Signing"), computed at the attempt's
 * start with the deliverer's clock, so a retry is signed again with a fresh timestamp over the
 * same body bytes and with the keys active then.
 *
 * - `X-Signature`: hex HMAC-SHA1 of the body with the newest active X-Signature key; absent when
 *   no key is active (a destination without a secret sends none, as the contract says).
 * - Standard Webhooks: `webhook-id` (the message id, as `X-Message-Id`), `webhook-timestamp`
 *   (Unix seconds) and one `v1,` signature per active `whsec_` key, space-separated; absent when
 *   no key is active.
 */
export function signatureHeaders(
  signing: DestinationSigning,
  messageId: string,
  body: Buffer,
  nowMs: number,
): Record<string, string> | undefined {
  let headers: Record<string, string> | undefined;
  if (signing.xSignature) {
    const key = newestActiveKey(signing.xSignatureKeys, nowMs);
    if (key !== undefined) headers = { [SIGNATURE_HEADER.toLowerCase()]: signBody(key.secret, body) };
  }
  if (signing.standardWebhooks) {
    const keys = activeKeys(signing.standardWebhooksKeys, nowMs);
    if (keys.length > 0) {
      const timestamp = Math.floor(nowMs / 1_000);
      headers ??= {};
      headers[STANDARD_WEBHOOKS_HEADERS.id] = messageId;
      headers[STANDARD_WEBHOOKS_HEADERS.timestamp] = String(timestamp);
      headers[STANDARD_WEBHOOKS_HEADERS.signature] = keys
        .map((k) => signStandardWebhook(webhookSecretKey(k.secret), messageId, timestamp, body))
        .join(' ');
    }
  }
  return headers;
}
