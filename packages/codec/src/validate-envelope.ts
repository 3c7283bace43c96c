import { Ajv } from 'ajv';
import { envelopeContractProblem, envelopeJsonSchema, type EventEnvelope } from '@sluice/envelope';

const ajv = new Ajv({ allErrors: false, strict: false });
const validate = ajv.compile<EventEnvelope>(envelopeJsonSchema as object);

/**
 * Checks a parsed value against the envelope contract (the JSON Schema, then the rules it cannot
 * express: `messageId` form, nesting); returns a reason or undefined.
 */
export function envelopeProblem(value: unknown): string | undefined {
  if (validate(value)) return envelopeContractProblem(value as EventEnvelope);
  const e = validate.errors?.[0];
  if (!e) return 'invalid envelope';
  const where = e.instancePath || '(envelope)';
  return `${where} ${e.message ?? 'is invalid'}`;
}
