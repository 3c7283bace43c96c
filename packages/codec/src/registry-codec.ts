import { envelopeJsonSchema, type EventEnvelope } from '@sluice/envelope';
import type { DecodeResult, EnvelopeCodec } from './codec.ts';
import { valueSubject } from './constants.ts';
import type { RegistryClientOptions } from './registry-client.ts';
import { envelopeProblem } from './validate-envelope.ts';
import { createRegistryValueCodec, type ValueCodec, type ValueDecodeResult } from './value-codec.ts';

export interface RegistryCodecOptions extends Omit<RegistryClientOptions, 'url'> {
  /** Base URL of the Confluent-compatible registry API (`SCHEMA_REGISTRY_URL`). */
  url: string;
  /** Subject of the envelope schema; default `sluice.events-value`. Use `valueSubject(topic)`. */
  subject?: string;
}

/** A registry-backed `EnvelopeCodec`, plus the id of the registered envelope schema. */
export interface RegistryEnvelopeCodec extends EnvelopeCodec {
  /** Registers the envelope schema if not done yet and returns its id (start-up check, tests). */
  schemaId(): Promise<number>;
}

/** Adapts a generic value codec to the envelope codec's result shape (`envelope` instead of `value`). */
export function asEnvelopeCodec(codec: ValueCodec<EventEnvelope>): EnvelopeCodec {
  return {
    format: codec.format,
    encode: (envelope) => codec.encode(envelope),
    decode: async (value) => toDecodeResult(await codec.decode(value)),
  };
}

function toDecodeResult(result: ValueDecodeResult<EventEnvelope>): DecodeResult {
  return result.ok ? { ok: true, envelope: result.value, format: result.format } : result;
}

/**
 * The envelope in the Confluent wire format (docs/reference/envelope.md): `envelopeJsonSchema` registered under
 * `subject`; reads framed and plain JSON records; validates with the same `envelopeProblem` as
 * the JSON codec. See `createRegistryValueCodec` for the failure behaviour.
 */
export function createRegistryCodec(options: RegistryCodecOptions): RegistryEnvelopeCodec {
  const codec = createRegistryValueCodec<EventEnvelope>({
    ...options,
    subject: options.subject ?? valueSubject('sluice.events'),
    schema: envelopeJsonSchema,
    problem: envelopeProblem,
  });
  return { ...asEnvelopeCodec(codec), schemaId: codec.schemaId };
}
