export { CONFLUENT_MAGIC_BYTE, createJsonCodec, decodeJsonPayload, isConfluentFramed } from './codec.ts';
export type { DecodeResult, EnvelopeCodec } from './codec.ts';
export { envelopeProblem } from './validate-envelope.ts';
