import { WebhookSecretError, webhookSecretKey } from '@sluice/webhook-signature';
import { parseDuration } from './duration.ts';
import { ConfigError } from './errors.ts';
import type { RawConfig } from './schema.ts';
import type { ResolveSecret } from './secrets.ts';
import type { OperatorEventsSettings } from './types.ts';

/**
 * `operatorEvents` with its secrets resolved and checked (docs/reference/operator-events.md): the
 * URL must be http(s), the secret a well-formed Standard Webhooks `whsec_` secret.
 */
export function resolveOperatorEvents(
  raw: NonNullable<RawConfig['operatorEvents']>,
  resolve: ResolveSecret,
): OperatorEventsSettings {
  const url = resolve('operatorEvents.url', raw.url);
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    throw new ConfigError('operatorEvents.url', 'is not a URL');
  }
  if (protocol !== 'https:' && protocol !== 'http:')
    throw new ConfigError('operatorEvents.url', 'must be http or https');
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
