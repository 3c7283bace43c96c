import { Ajv, type ErrorObject } from 'ajv';
import { DURATION_PATTERN } from './duration.ts';
import { ConfigError } from './errors.ts';
import { fieldPath } from './field-path.ts';

/** One validator for every schema of the config: defaults filled in, all errors gathered. */
export const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
/** The keys of a secret given by reference (`{ env: NAME }`, `{ file: PATH }`). */
const SECRET_KEYS = ['env', 'file'];
/** Where a keyring key is read (`runtimeDestinations.keyring[i].key`): a reference only, never a literal. */
const KEY_REFERENCE = /^\/runtimeDestinations\/keyring\/\d+\/key$/;

function describe(error: ErrorObject): ConfigError {
  const p = error.params as Record<string, unknown>;
  if (error.keyword === 'required')
    return new ConfigError(fieldPath(error.instancePath, String(p.missingProperty)), 'is required');
  if (error.keyword === 'additionalProperties') {
    return new ConfigError(fieldPath(error.instancePath, String(p.additionalProperty)), 'is not a known setting');
  }
  return new ConfigError(fieldPath(error.instancePath), error.message ?? 'is invalid');
}

/**
 * The one error reported for a value the schema refused: the most specific of the validator's
 * errors (anyOf/union failures list their branches first), its field relative to what was validated.
 */
export function schemaError(errors: ErrorObject[]): ConfigError {
  const duration = errors.find(
    (e) => e.keyword === 'pattern' && (e.params as { pattern?: string }).pattern === DURATION_PATTERN,
  );
  if (duration) {
    return new ConfigError(
      fieldPath(duration.instancePath),
      'must be a duration: milliseconds, or a string like 250ms, 5s, 2m, 4h',
    );
  }
  const key = errors.find((e) => KEY_REFERENCE.test(e.instancePath));
  if (key) {
    return new ConfigError(
      fieldPath(key.instancePath),
      'must be { env: NAME } or { file: PATH } (a key is never written in the config itself)',
    );
  }
  const secret = errors.find((e) => e.keyword === 'anyOf');
  if (
    secret &&
    errors.some((e) => {
      // A `{ env }` or `{ file }` branch of a secret's union: a key missing, or one too many.
      const p = e.params as { missingProperty?: string; additionalProperty?: string };
      return (
        e.instancePath === secret.instancePath && SECRET_KEYS.includes(p.missingProperty ?? p.additionalProperty ?? '')
      );
    })
  ) {
    return new ConfigError(
      fieldPath(secret.instancePath),
      'must be a non-empty string, { env: NAME } or { file: PATH }',
    );
  }
  return describe(errors.find((e) => e.keyword !== 'anyOf' && e.keyword !== 'oneOf') ?? errors[0]!);
}
