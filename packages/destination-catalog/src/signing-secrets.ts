import { DEFAULT_SIGNING_SCHEMES, type SigningScheme } from '@sluice/config';
import { generateSharedSecret, generateWebhookSecret } from '@sluice/secret-keyring';
import { isObject, type JsonObject } from './secret-fields.ts';

/** A secret made by the catalog: shown once, in the outcome of the change that made it, then only encrypted. */
export interface GeneratedSecret {
  scheme: SigningScheme;
  /** Where it sits in the definition (`settings.signing.standardWebhooks.secrets[0].secret`). */
  field: string;
  secret: string;
}

/** A signing secret of a rotation set, as the config file writes it. */
type RotatingSecret = { secret: unknown; notBefore?: string; notAfter?: string };

/** Each scheme's secret set in the definition, and how the generator makes a secret for it. */
const SCHEMES = {
  'x-signature': { key: 'xSignature', generate: generateSharedSecret },
  'standard-webhooks': { key: 'standardWebhooks', generate: generateWebhookSecret },
} as const;

/** The `settings` of a definition, and its `signing`, created empty where absent (the definition is a working copy). */
function signingOf(definition: JsonObject): { settings: JsonObject; signing: JsonObject } {
  if (!isObject(definition.settings)) definition.settings = {};
  const settings = definition.settings as JsonObject;
  if (!isObject(settings.signing)) settings.signing = {};
  return { settings, signing: settings.signing as JsonObject };
}

/** The schemes a definition signs with: its own, or the config's default. */
export function schemesOf(definition: JsonObject): readonly SigningScheme[] {
  const settings = isObject(definition.settings) ? definition.settings : {};
  const schemes = isObject(settings.signing) ? settings.signing.schemes : undefined;
  return Array.isArray(schemes) ? (schemes as SigningScheme[]) : DEFAULT_SIGNING_SCHEMES;
}

/** Whether the definition gives a secret for the scheme (X-Signature: `sharedSecret` counts). */
function hasSecrets(definition: JsonObject, scheme: SigningScheme): boolean {
  const settings = isObject(definition.settings) ? definition.settings : {};
  if (scheme === 'x-signature' && settings.sharedSecret !== undefined) return true;
  return isObject(settings.signing) && settings.signing[SCHEMES[scheme].key] !== undefined;
}

/**
 * Fills in the secrets of each chosen scheme the definition gives none for (changing it): from
 * `previous` (the destination's current definition, on a replace or patch: secrets are never read
 * back, so a client cannot send them again), else a new secret each, returned to be shown once.
 */
export function fillSigningSecrets(definition: JsonObject, previous: JsonObject | undefined): GeneratedSecret[] {
  const generated: GeneratedSecret[] = [];
  for (const scheme of schemesOf(definition)) {
    if (!(scheme in SCHEMES) || hasSecrets(definition, scheme)) continue;
    const { key, generate } = SCHEMES[scheme];
    const { settings, signing } = signingOf(definition);
    if (previous !== undefined && hasSecrets(previous, scheme)) {
      const before = signingOf(structuredClone(previous));
      if (scheme === 'x-signature' && before.settings.sharedSecret !== undefined)
        settings.sharedSecret = before.settings.sharedSecret;
      if (before.signing[key] !== undefined) signing[key] = before.signing[key];
      continue;
    }
    const secret = generate();
    signing[key] = { secrets: [{ secret }] };
    generated.push({ scheme, field: `settings.signing.${key}.secrets[0].secret`, secret });
  }
  return generated;
}

/** What a rotation is: which scheme, when, and how long the old secrets overlap the new one. */
export interface Rotation {
  scheme: SigningScheme;
  at: number;
  overlapMs: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Rotates one scheme's secrets (changing the definition) the way docs/configuration.md, "Signing",
 * rotates them by hand: every current secret (and `sharedSecret`, moved into the set) stops at
 * `at + overlapMs`; those that never become active before then, or have expired, are dropped. The
 * new Standard Webhooks secret signs at once, beside the old ones until they stop; the new
 * X-Signature secret takes over at `at + overlapMs` (one secret signs X-Signature: the newest
 * active). Returns the new secret, to be shown once.
 */
export function rotateSigningSecret(definition: JsonObject, rotation: Rotation): GeneratedSecret {
  const { key, generate } = SCHEMES[rotation.scheme];
  const { settings, signing } = signingOf(definition);
  const end = rotation.at + rotation.overlapMs;
  const set = isObject(signing[key]) ? (signing[key] as JsonObject) : {};
  const current: RotatingSecret[] = Array.isArray(set.secrets) ? (set.secrets as RotatingSecret[]) : [];
  if (rotation.scheme === 'x-signature' && settings.sharedSecret !== undefined) {
    current.unshift({ secret: settings.sharedSecret });
    delete settings.sharedSecret;
  }
  const kept = current
    .filter(
      (s) =>
        (s.notAfter === undefined || Date.parse(s.notAfter) > rotation.at) && !(Date.parse(s.notBefore ?? '') >= end),
    )
    .map((s) => ({ ...s, notAfter: iso(Math.min(end, s.notAfter === undefined ? end : Date.parse(s.notAfter))) }));
  const secret = generate();
  const fresh = rotation.scheme === 'x-signature' ? { secret, notBefore: iso(end) } : { secret };
  signing[key] = { ...set, secrets: [...kept, fresh] };
  return { scheme: rotation.scheme, field: `settings.signing.${key}.secrets[${kept.length}].secret`, secret };
}
