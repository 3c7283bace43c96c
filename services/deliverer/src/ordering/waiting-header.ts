import type { ConsumedRecord } from '@sluice/kafka';
import { headerText } from '@sluice/envelope';
import { ORDERING_HEADER } from '../service/constants.ts';

/** The `sluice-ordering` header of a waiting record: the round it was written in and its place in the queue. */
export function orderingHeader(round: string, seq: number | undefined): string {
  return JSON.stringify(seq === undefined ? { round } : { round, seq });
}

/** A waiting record's `sluice-ordering` header read: its round, its place and whether it is a gap record (nothing usable when unreadable). */
export function orderingHeaderOf(record: ConsumedRecord): {
  round: string | undefined;
  seq: number | undefined;
  gap: boolean;
} {
  const text = headerText(record.headers, ORDERING_HEADER);
  if (text === undefined) return { round: undefined, seq: undefined, gap: false };
  try {
    const { round, seq, gap } = JSON.parse(text) as { round?: unknown; seq?: unknown; gap?: unknown };
    const place = typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined;
    return {
      round: typeof round === 'string' ? round : undefined,
      seq: place,
      gap: gap === true && place !== undefined,
    };
  } catch {
    return { round: undefined, seq: undefined, gap: false };
  }
}
