import { Ajv } from 'ajv';
import { envelopeJsonSchema, type EventEnvelope } from '@sluice/envelope';

const ajv = new Ajv({ allErrors: false, strict: false });
const validate = ajv.compile<EventEnvelope>(envelopeJsonSchema as object);

/** Checks a parsed value against the envelope schema; returns a reason or undefined. */
export function envelopeProblem(value: unknown): string | undefined {
  if (validate(value)) return undefined;
  const e = validate.errors?.[0];
  if (!e) return 'invalid envelope';
  const where = e.instancePath || '(envelope)';
  return `${where} ${e.message ?? 'is invalid'}`;
}
