import { Type } from '@sinclair/typebox';

/** The signature schemes a destination can send (docs/configuration.md, "Signing"). */
export const SIGNING_SCHEMES = ['x-signature', 'standard-webhooks'] as const;
export type SigningScheme = (typeof SIGNING_SCHEMES)[number];
/** The schemes of a destination that chooses none (`settings.signing.schemes`). */
export const DEFAULT_SIGNING_SCHEMES: readonly SigningScheme[] = ['x-signature'];

/** A secret: a literal string, or `{ "env": "NAME" }` read from the environment at load time. */
const Secret = Type.Union([
  Type.String({ minLength: 1 }),
  Type.Object({ env: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
]);

/** One secret of a rotation set, active from `notBefore` until `notAfter` (RFC 3339 times). */
const RotatingSecret = Type.Object(
  {
    secret: Secret,
    notBefore: Type.Optional(Type.String({ minLength: 1 })),
    notAfter: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

const SecretSet = Type.Object(
  { secrets: Type.Array(RotatingSecret, { minItems: 1, maxItems: 10 }) },
  { additionalProperties: false },
);

/** `destinations[].settings.signing`: which signatures each request carries, and their secrets. */
export const SigningSchema = Type.Object(
  {
    schemes: Type.Array(Type.Union(SIGNING_SCHEMES.map((s) => Type.Literal(s))), {
      minItems: 1,
      uniqueItems: true,
      default: [...DEFAULT_SIGNING_SCHEMES],
    }),
    xSignature: Type.Optional(SecretSet),
    standardWebhooks: Type.Optional(SecretSet),
  },
  { additionalProperties: false, default: {} },
);
