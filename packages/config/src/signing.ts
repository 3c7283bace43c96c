import { webhookSecretKey, WebhookSecretError, type SigningKey } from '@sluice/webhook-signature';
import { ConfigError } from './errors.ts';
import { subField } from './field-path.ts';
import type { RawConfig } from './schema.ts';
import type { Secret } from './secrets.ts';
import type { DestinationSigning } from './types.ts';

type RawDestination = RawConfig['destinations'][number];
type RawKey = { secret: Secret; notBefore?: string; notAfter?: string };

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

/** Milliseconds of an RFC 3339 time with a zone; NaN for anything else (Date.parse alone accepts February 31). */
function parseInstant(value: string): number {
  const m = RFC3339.exec(value);
  if (!m) return NaN;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return NaN;
  return Date.parse(value);
}

function instant(field: string, value: string): number {
  const ms = parseInstant(value);
  if (Number.isNaN(ms)) {
    const example = '2026-01-31T00:00:00Z';
    throw new ConfigError(field, `must be an RFC 3339 time with a zone, e.g. ${example}, got ${JSON.stringify(value)}`);
  }
  return ms;
}

function key(field: string, raw: RawKey, resolve: (field: string, secret: Secret) => string): SigningKey {
  const out: SigningKey = { secret: resolve(`${field}.secret`, raw.secret) };
  if (raw.notBefore !== undefined) out.notBefore = instant(`${field}.notBefore`, raw.notBefore);
  if (raw.notAfter !== undefined) out.notAfter = instant(`${field}.notAfter`, raw.notAfter);
  if (out.notBefore !== undefined && out.notAfter !== undefined && out.notAfter <= out.notBefore) {
    throw new ConfigError(`${field}.notAfter`, 'must be later than notBefore');
  }
  return out;
}

/**
 * A destination's signing settings, checked and with secrets resolved (docs/configuration.md,
 * "Signing"). `sharedSecret` is the first X-Signature key, active without bounds. A scheme's secrets
 * given while the scheme is not chosen, or Standard Webhooks chosen without secrets, is an error;
 * every Standard Webhooks secret must be a well-formed `whsec_` secret.
 */
export function resolveSigning(
  dest: RawDestination,
  base: string,
  resolve: (field: string, secret: Secret) => string,
): DestinationSigning {
  const signing = dest.settings.signing;
  const field = subField(base, 'settings.signing');
  const sharedSecret = subField(base, 'settings.sharedSecret');
  const xSignature = signing.schemes.includes('x-signature');
  const standardWebhooks = signing.schemes.includes('standard-webhooks');
  if (!xSignature && dest.settings.sharedSecret !== undefined) {
    throw new ConfigError(sharedSecret, 'is set but signing.schemes does not include x-signature');
  }
  if (!xSignature && signing.xSignature !== undefined) {
    throw new ConfigError(`${field}.xSignature`, 'is set but signing.schemes does not include x-signature');
  }
  if (!standardWebhooks && signing.standardWebhooks !== undefined) {
    throw new ConfigError(`${field}.standardWebhooks`, 'is set but signing.schemes does not include standard-webhooks');
  }
  if (standardWebhooks && signing.standardWebhooks === undefined) {
    const problem = 'is required when signing.schemes includes standard-webhooks';
    throw new ConfigError(`${field}.standardWebhooks.secrets`, problem);
  }
  const xSignatureKeys: SigningKey[] = [];
  if (dest.settings.sharedSecret !== undefined) {
    xSignatureKeys.push({ secret: resolve(sharedSecret, dest.settings.sharedSecret) });
  }
  signing.xSignature?.secrets.forEach((raw, i) => {
    xSignatureKeys.push(key(`${field}.xSignature.secrets[${i}]`, raw, resolve));
  });
  const standardWebhooksKeys = (signing.standardWebhooks?.secrets ?? []).map((raw, i) => {
    const k = key(`${field}.standardWebhooks.secrets[${i}]`, raw, resolve);
    try {
      webhookSecretKey(k.secret);
    } catch (err) {
      if (err instanceof WebhookSecretError) {
        throw new ConfigError(`${field}.standardWebhooks.secrets[${i}].secret`, err.message);
      }
      throw err;
    }
    return k;
  });
  return { xSignature, standardWebhooks, xSignatureKeys, standardWebhooksKeys };
}
