import type { EventEnvelope } from '@sluice/envelope';
import type { EnvelopeCodec } from './codec.ts';
import { valueSubject } from './constants.ts';
import { asEnvelopeCodec, createRegistryCodec } from './registry-codec.ts';
import { envelopeProblem } from './validate-envelope.ts';
import { createJsonValueCodec } from './value-codec.ts';
import type { RegistryClientOptions } from './registry-client.ts';

export interface EnvelopeCodecOptions extends Omit<RegistryClientOptions, 'url'> {
  /** `SCHEMA_REGISTRY_URL` (`ctx.env.schemaRegistryUrl`); without it, plain JSON. */
  schemaRegistryUrl?: string | undefined;
  /** The events topic (from config); the subject is `<topic>-value`. */
  topic: string;
}

/** The default codec: JSON on the wire, validated like every other read. A Confluent-framed record needs a registry to be read. */
export function createJsonCodec(): EnvelopeCodec {
  return asEnvelopeCodec(createJsonValueCodec<EventEnvelope>(envelopeProblem));
}

/**
 * The codec every service uses for `sluice.events` (docs/reference/envelope.md): the JSON codec when no registry is
 * configured, else the Confluent wire format with the envelope schema under `<topic>-value`.
 * Both read both formats (the JSON codec rejects framed records: it has no registry to ask).
 * The registry codec starts registering the envelope schema at once, so `<topic>-value` exists as
 * soon as a service is up (upstream producers look its id up); a failure there is not lost, it
 * is raised again by the first `encode`.
 */
export function createEnvelopeCodec(options: EnvelopeCodecOptions): EnvelopeCodec {
  const { schemaRegistryUrl, topic, ...rest } = options;
  if (!schemaRegistryUrl) return createJsonCodec();
  const codec = createRegistryCodec({ ...rest, url: schemaRegistryUrl, subject: valueSubject(topic) });
  codec.schemaId().catch(() => {});
  return codec;
}
