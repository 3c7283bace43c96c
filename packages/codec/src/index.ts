export type { DecodeResult, EnvelopeCodec } from './codec.ts';
export { envelopeProblem } from './validate-envelope.ts';
export { REGISTRY_DEFAULTS, valueSubject } from './constants.ts';
export { createEnvelopeCodec, createJsonCodec, type EnvelopeCodecOptions } from './create-envelope-codec.ts';
export { CodecError, InvalidValueError, SchemaRegistrationError, SchemaRegistryUnavailableError } from './errors.ts';
export { createRegistryCodec, type RegistryCodecOptions, type RegistryEnvelopeCodec } from './registry-codec.ts';
export type { RegistryClientOptions } from './registry-client.ts';
export { createSnapshotCodec, snapshotProblem, type SnapshotCodecOptions } from './snapshot-codec.ts';
export {
  createJsonValueCodec,
  createRegistryValueCodec,
  type ProblemFinder,
  type RegistryValueCodecOptions,
  type RejectCode,
  type ValueCodec,
  type ValueDecodeResult,
} from './value-codec.ts';
export {
  CONFLUENT_HEADER_BYTES,
  CONFLUENT_MAGIC_BYTE,
  frameConfluent,
  isConfluentFramed,
  unframeConfluent,
} from './wire-format.ts';
export type { RegistryAccess } from './registry-access.ts';
