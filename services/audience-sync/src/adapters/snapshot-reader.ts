import { isConfluentFramed, type ValueCodec } from '@sluice/codec';
import type { Snapshot } from '@sluice/envelope';

export type SnapshotRead = { ok: true; value: unknown } | { ok: false; code: string; message: string };

/**
 * Reads a `sluice.audiences` record value in either format (docs/reference/envelope.md): a Confluent-framed record is
 * unwrapped (and schema-checked) by the registry codec; a plain JSON record is only parsed, so the
 * domain's `parseSnapshot` reports its precise field-level reason. Both then go through
 * `parseSnapshot`.
 */
export function createSnapshotReader(codec: ValueCodec<Snapshot>): (value: Buffer | null) => Promise<SnapshotRead> {
  return async (value) => {
    if (value && isConfluentFramed(value)) {
      const decoded = await codec.decode(value);
      return decoded.ok ? { ok: true, value: decoded.value } : decoded;
    }
    try {
      return { ok: true, value: JSON.parse(value?.toString('utf8') ?? '') };
    } catch {
      return { ok: false, code: 'not_json', message: 'snapshot is not JSON' };
    }
  };
}
