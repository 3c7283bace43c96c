import type { EventEnvelope } from '@sluice/envelope';
import type { RejectCode } from './value-codec.ts';

/** Result of reading a record value: the envelope, or why it cannot be used (→ `sluice.rejected`). */
export type DecodeResult =
  | { ok: true; envelope: EventEnvelope; format: 'json' | 'confluent' }
  | { ok: false; code: RejectCode; message: string };

/**
 * Encodes envelopes for `sluice.events` and reads both plain JSON and the Confluent wire format
 * (docs/reference/envelope.md).
 */
export interface EnvelopeCodec {
  readonly format: 'json' | 'confluent';
  encode(envelope: EventEnvelope): Promise<Buffer>;
  decode(value: Buffer | null): Promise<DecodeResult>;
}
