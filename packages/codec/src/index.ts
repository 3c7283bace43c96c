export type { DecodeResult, EnvelopeCodec } from './codec.ts';
export { envelopeProblem } from './validate-envelope.ts';
export { REGISTRY_DEFAULTS, valueSubject } from './constants.ts';
export { createEnvelopeCodec, createJsonCodec } from './create-envelope-codec.ts';
export type { EnvelopeCodecOptions } from './create-envelope-codec.ts';
export { CodecError, InvalidValueError, SchemaRegistrationError, SchemaRegistryUnavailableError } from './errors.ts';
export { createRegistryCodec } from './registry-codec.ts';
export type { RegistryCodecOptions, RegistryEnvelopeCodec } from './registry-codec.ts';
export type { RegistryClientOptions } from './registry-client.ts';
export { createSnapshotCodec, snapshotProblem } from './snapshot-codec.ts';
export type { SnapshotCodecOptions } from './snapshot-codec.ts';
export { createJsonValueCodec, createRegistryValueCodec } from './value-codec.ts';
export type {
  ProblemFinder,
  RegistryValueCodecOptions,
  RejectCode,
  ValueCodec,
  ValueDecodeResult,
} from './value-codec.ts';
export {
  CONFLUENT_HEADER_BYTES,
  CONFLUENT_MAGIC_BYTE,
  frameConfluent,
  isConfluentFramed,
  unframeConfluent,
} from './wire-format.ts';
export type { RegistryAccess } from './registry-access.ts';
