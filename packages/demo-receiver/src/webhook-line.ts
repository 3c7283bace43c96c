import { verifySignature } from '@sluice/webhook-signature';
import { MAX_PRINTED_BODY_CHARS } from './constants.ts';

/** What the receiver learnt from one webhook request. */
export interface WebhookCheck {
  type: string;
  messageId: string;
  /** `ok`, `BAD` (wrong or missing signature), or `unsigned` (no secret configured). */
  signature: 'ok' | 'BAD' | 'unsigned';
  body: string;
}

/** Checks one webhook: signature over the exact bytes received, type and messageId from the JSON. */
export function checkWebhook(body: Buffer, signature: string | undefined, secret: string | undefined): WebhookCheck {
  const text = body.toString('utf8');
  let type = '?';
  let messageId = '-';
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    if (typeof parsed.type === 'string') type = parsed.type;
    if (typeof parsed.messageId === 'string') messageId = parsed.messageId;
  } catch {
    type = '(not JSON)';
  }
  const verdict =
    secret === undefined
      ? 'unsigned'
      : signature !== undefined && verifySignature(secret, body, signature)
        ? 'ok'
        : 'BAD';
  return { type, messageId, signature: verdict, body: text };
}

/** One console line per webhook: `webhook track messageId=… signature ok {…}`. */
export function formatWebhookLine(check: WebhookCheck): string {
  const body =
    check.body.length > MAX_PRINTED_BODY_CHARS ? `${check.body.slice(0, MAX_PRINTED_BODY_CHARS)}…` : check.body;
  return `webhook ${check.type} messageId=${check.messageId} signature ${check.signature} ${body}`;
}
