import type { ConsumedRecord } from '@sluice/kafka';
import { headerText } from '@sluice/envelope';
import { ORDERING_HEADER } from '../service/constants.ts';
import { isEpoch } from './queue-rules.ts';

/** A waiting record's place as its header carries it: its number, the run of numbering it belongs to, whether it is a gap. */
export interface HeaderPlace {
  seq: number | undefined;
  epoch?: string | undefined;
  gap?: boolean;
}

/** The `sluice-ordering` header of a waiting record: the round it was written in and its place in the queue. */
export function orderingHeader(round: string, place: HeaderPlace): string {
  const { seq, epoch, gap } = place;
  return JSON.stringify({
    round,
    ...(seq !== undefined && { seq }),
    ...(seq !== undefined && epoch !== undefined && { epoch }),
    ...(seq !== undefined && gap && { gap: true }),
  });
}

/** A waiting record's `sluice-ordering` header read: its round, its place and whether it is a gap record (nothing usable when unreadable). */
export function orderingHeaderOf(record: ConsumedRecord): {
  round: string | undefined;
  seq: number | undefined;
  epoch: string | undefined;
  gap: boolean;
} {
  const text = headerText(record.headers, ORDERING_HEADER);
  const unreadable = { round: undefined, seq: undefined, epoch: undefined, gap: false };
  if (text === undefined) return unreadable;
  try {
    const { round, seq, epoch, gap } = JSON.parse(text) as {
      round?: unknown;
      seq?: unknown;
      epoch?: unknown;
      gap?: unknown;
    };
    const place = typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined;
    // An epoch that is not a short string names no run: the record matches none and is dropped as a copy.
    const run = epoch === undefined ? undefined : isEpoch(epoch) ? epoch : '\u0000';
    return {
      round: typeof round === 'string' ? round : undefined,
      seq: place,
      epoch: run,
      gap: gap === true && place !== undefined,
    };
  } catch {
    return unreadable;
  }
}
