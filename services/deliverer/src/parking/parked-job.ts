import { traceHeadersOf } from '@sluice/tracing';
import { headerText, type RetryState } from '@sluice/envelope';
import type { DeliveryJob } from '../intake/delivery-job.ts';

/** The header of a parked record holding what its later delivery needs (docs/reference/destination-states.md). */
export const PARKED_HEADER = 'sluice-parked';

/** What a parked record carries beside the body: the job, its window's start, and when it was parked. */
interface ParkedDocument {
  messageId: string;
  sourceId: string;
  destinationId: string;
  eventType: string;
  endpoints: string[];
  receivedAt?: string;
  /** Epoch ms Sluice accepted a fresh event (its window's start), moved later by earlier parks. */
  acceptedAt?: number;
  /** The retry state of a job that was attempted before (its window's start is `firstAttemptAt`). */
  previous?: RetryState;
  /** Epoch ms the record was parked. */
  parkedAt: number;
}

/** The headers of a parked record (the key and the body are the job's). */
export function parkedHeaders(
  job: DeliveryJob,
  acceptedAt: number | undefined,
  parkedAt: number,
): Record<string, string> {
  const doc: ParkedDocument = {
    messageId: job.messageId,
    sourceId: job.sourceId,
    destinationId: job.destinationId,
    eventType: job.eventType,
    endpoints: job.endpoints,
    parkedAt,
  };
  if (job.receivedAt !== undefined) doc.receivedAt = job.receivedAt;
  if (acceptedAt !== undefined) doc.acceptedAt = acceptedAt;
  if (job.previous !== undefined) doc.previous = job.previous;
  return { [PARKED_HEADER]: JSON.stringify(doc), ...job.trace };
}

/** A parked record as read: its key and body are the job's, its headers say the rest. */
export interface ParkedRecord {
  key: string | null;
  body: Buffer;
  headers: Record<string, Buffer | string | (Buffer | string)[] | undefined>;
}

export type Unparked =
  | { ok: true; job: DeliveryJob; acceptedAt: number | undefined; parkedMs: number }
  | { ok: false; message: string };

/**
 * The job of a parked record, taken out at `now`. The window rule (docs/reference/destination-states.md):
 * time spent parked does not count against the 4 h window, so the window's start moves later by
 * the time the record was parked — a fresh event's acceptance time, or a retried event's first
 * attempt time (which its later retry records then carry).
 */
export function unparkJob(record: ParkedRecord, now: number): Unparked {
  const { key, body, headers } = record;
  const text = headerText(headers, PARKED_HEADER);
  if (text === undefined) return { ok: false, message: `parked record without its ${PARKED_HEADER} header` };
  let doc: ParkedDocument;
  try {
    doc = JSON.parse(text) as ParkedDocument;
  } catch {
    return { ok: false, message: `${PARKED_HEADER} header is not JSON` };
  }
  const strings = [doc.messageId, doc.sourceId, doc.destinationId, doc.eventType];
  if (strings.some((s) => typeof s !== 'string') || !Array.isArray(doc.endpoints) || !Number.isFinite(doc.parkedAt))
    return { ok: false, message: `${PARKED_HEADER} header lacks a field the delivery needs` };
  const parkedMs = Math.max(0, now - doc.parkedAt);
  const job: DeliveryJob = {
    key,
    body,
    messageId: doc.messageId,
    sourceId: doc.sourceId,
    destinationId: doc.destinationId,
    eventType: doc.eventType,
    endpoints: doc.endpoints,
  };
  if (doc.receivedAt !== undefined) job.receivedAt = doc.receivedAt;
  const trace = traceHeadersOf(headers);
  if (trace !== undefined) job.trace = trace;
  if (doc.previous !== undefined)
    job.previous = { ...doc.previous, firstAttemptAt: doc.previous.firstAttemptAt + parkedMs };
  const acceptedAt = doc.acceptedAt === undefined ? undefined : doc.acceptedAt + parkedMs;
  return { ok: true, job, acceptedAt, parkedMs };
}
