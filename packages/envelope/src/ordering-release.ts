import { headerText, type RawHeaders } from './header-text.ts';

/**
 * The release marker (docs/reference/ordering.md): written by the retry service to
 * `sluice.redeliver`, with the event's own key, when it dead-letters an event of a destination with
 * per-user order, so the deliverer owning that user's queue releases it in partition order.
 */
export const ORDERING_RELEASE_HEADER = 'sluice-ordering-release';

export interface OrderingRelease {
  destinationId: string;
  messageId: string;
}

/** The record of a release marker (no body). */
export function orderingReleaseRecord(
  key: string | null,
  release: OrderingRelease,
): { key: string | null; value: null; headers: Record<string, string> } {
  return { key, value: null, headers: { [ORDERING_RELEASE_HEADER]: JSON.stringify(release) } };
}

/** The release a record carries, or undefined for any other record (a marker that cannot be read counts as none). */
export function readOrderingRelease(headers: RawHeaders | undefined): OrderingRelease | undefined {
  const text = headerText(headers, ORDERING_RELEASE_HEADER);
  if (text === undefined) return undefined;
  try {
    const doc = JSON.parse(text) as Partial<OrderingRelease>;
    if (typeof doc.destinationId === 'string' && typeof doc.messageId === 'string')
      return { destinationId: doc.destinationId, messageId: doc.messageId };
  } catch {
    // Not a release marker after all.
  }
  return undefined;
}
