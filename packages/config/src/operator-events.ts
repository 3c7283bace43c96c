import { WebhookSecretError, webhookSecretKey } from '@sluice/webhook-signature';
import { parseDuration } from './duration.ts';
import { checkWebhookUrl } from './endpoints.ts';
import { ConfigError } from './errors.ts';
import type { RawConfig } from './schema.ts';
import type { ResolveSecret } from './secrets.ts';
import type { OperatorEventsSettings } from './types.ts';

/**
 * `operatorEvents` with its secrets resolved and checked (docs/reference/operator-events.md): the
 * URL by the rule of a destination's endpoint URL (`checkWebhookUrl`: `http` or `https`), the
 * secret a well-formed Standard Webhooks `whsec_` secret.
 */
export function resolveOperatorEvents(
  raw: NonNullable<RawConfig['operatorEvents']>,
  resolve: ResolveSecret,
): OperatorEventsSettings {
  const url = resolve('operatorEvents.url', raw.url);
  checkWebhookUrl('operatorEvents.url', url);
  const secret = resolve('operatorEvents.secret', raw.secret);
  try {
    webhookSecretKey(secret);
  } catch (err) {
    if (err instanceof WebhookSecretError) throw new ConfigError('operatorEvents.secret', err.message);
    throw err;
  }
  return {
    url,
    secret,
    deadLetterBurst: raw.deadLetterBurst,
    filterRefusesAll: raw.filterRefusesAll,
    secretExpiryNoticeMs: parseDuration(raw.secretExpiryNotice),
  };
}
