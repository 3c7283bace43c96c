import { Ajv } from 'ajv';
import { snapshotJsonSchema, type Snapshot } from '@sluice/envelope';
import { valueSubject } from './constants.ts';
import type { RegistryClientOptions } from './registry-client.ts';
import { createJsonValueCodec, createRegistryValueCodec, type ValueCodec } from './value-codec.ts';

const ajv = new Ajv({ allErrors: false, strict: false });
const validate = ajv.compile<Snapshot>(snapshotJsonSchema as object);

/** Checks a parsed value against the snapshot schema (docs/reference/audiences.md); returns a reason or undefined. */
export function snapshotProblem(value: unknown): string | undefined {
  if (validate(value)) return undefined;
  const e = validate.errors?.[0];
  if (!e) return 'invalid snapshot';
  return `${e.instancePath || '(snapshot)'} ${e.message ?? 'is invalid'}`;
}

export interface SnapshotCodecOptions extends Omit<RegistryClientOptions, 'url'> {
  /** `SCHEMA_REGISTRY_URL`; without it, plain JSON. */
  schemaRegistryUrl?: string | undefined;
  /** The audiences topic (from config); the subject is `<topic>-value`. */
  topic: string;
}

/**
 * Codec for `sluice.audiences` values: JSON without a registry, else the Confluent wire format with
 * `snapshotJsonSchema` under `<topic>-value`. Decoding reads both; a bad snapshot decodes to
 * `{ ok: false, code: 'invalid_envelope' }` (the shared reject code for "fails the contract").
 * With a registry, registration of the snapshot schema starts at once.
 */
export function createSnapshotCodec(options: SnapshotCodecOptions): ValueCodec<Snapshot> {
  const { schemaRegistryUrl, topic, ...rest } = options;
  if (!schemaRegistryUrl) return createJsonValueCodec<Snapshot>(snapshotProblem);
  const codec = createRegistryValueCodec<Snapshot>({
    ...rest,
    url: schemaRegistryUrl,
    subject: valueSubject(topic),
    schema: snapshotJsonSchema,
    problem: snapshotProblem,
  });
  codec.schemaId().catch(() => {}); // as createEnvelopeCodec: the subject exists once the service is up
  return codec;
}
