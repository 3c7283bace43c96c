import type { EventEnvelope } from '@sluice/envelope';
import { envelopeProblem } from './validate-envelope.ts';

/** Result of reading a record value: the envelope, or why it cannot be used (→ `sluice.rejected`). */
export type DecodeResult =
  | { ok: true; envelope: EventEnvelope; format: 'json' | 'confluent' }
  | { ok: false; code: 'empty' | 'not_json' | 'invalid_envelope' | 'unknown_schema' | 'registry_unavailable'; message: string };

/** Encodes envelopes for `sluice.events` and reads both plain JSON and the Confluent wire format (SPEC §4). */
export interface EnvelopeCodec {
  readonly format: 'json' | 'confluent';
  encode(envelope: EventEnvelope): Promise<Buffer>;
  decode(value: Buffer | null): Promise<DecodeResult>;
}

/** Confluent wire format: magic byte 0, 4-byte big-endian schema id, then the payload. */
export const CONFLUENT_MAGIC_BYTE = 0;

export function isConfluentFramed(value: Buffer): boolean {
  return value.length >= 5 && value[0] === CONFLUENT_MAGIC_BYTE;
}

/** Parses and validates a JSON payload (shared by both formats). */
export function decodeJsonPayload(payload: Buffer): DecodeResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8'));
  } catch (err) {
    return { ok: false, code: 'not_json', message: `value is not JSON: ${(err as Error).message}` };
  }
  const problem = envelopeProblem(parsed);
  if (problem) return { ok: false, code: 'invalid_envelope', message: problem };
  return { ok: true, envelope: parsed as EventEnvelope, format: 'json' };
}

/** The default codec: JSON on the wire. A Confluent-framed record needs a registry to be read. */
export function createJsonCodec(): EnvelopeCodec {
  return {
    format: 'json',
    encode: async (envelope) => Buffer.from(JSON.stringify(envelope)),
    decode: async (value) => {
      if (!value || value.length === 0) return { ok: false, code: 'empty', message: 'record has no value' };
      if (isConfluentFramed(value)) {
        return { ok: false, code: 'registry_unavailable', message: `record is in the Confluent wire format (schema id ${value.readUInt32BE(1)}) but no schema registry is configured` };
      }
      return decodeJsonPayload(value);
    },
  };
}
