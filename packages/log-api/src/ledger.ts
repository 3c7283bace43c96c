import { answerGuard, isCount, isText, isTime, listOf, objectOf, oneOf, orNull } from './answer-guard.ts';

/**
 * The answers of the delivery log's ledger routes, `GET /api/v1/ledger` and
 * `GET /api/v1/ledger/unaccounted` (docs/delivery-log.md, "Ledger"; the `Ledger` and `Unaccounted`
 * schemas of its OpenAPI document): what the delivery log answers and what its clients read.
 */

/** The states of a delivery still in flight: nothing attempted yet, or its last attempt failed. */
export const UNSETTLED_STATES = ['delivering', 'retrying'] as const;
export type UnsettledState = (typeof UNSETTLED_STATES)[number];
/** Why an unaccounted delivery counts: nothing attempted, or a retry path that stopped. */
export const UNACCOUNTED_REASONS = ['never_attempted', 'retry_stopped'] as const;
export type UnaccountedReason = (typeof UNACCOUNTED_REASONS)[number];

/** The counts of one source and destination over a span of receive times, as both the API and the store keep them. */
export interface LedgerCounts {
  /** Deliveries of events received in the span (one per event and destination). */
  accepted: number;
  delivered: number;
  filtered: number;
  dead: number;
  /** Not settled (delivered, filtered or dead): parked and unaccounted included. */
  inFlight: number;
  /** Unsettled at a paused or disabled destination. */
  parked: number;
  /** Unsettled past the retry window plus the grace, not parked. */
  unaccounted: number;
}

/** The figures of one source and destination over a span of receive times (times ISO 8601). */
export interface LedgerTotals extends LedgerCounts {
  sourceId: string;
  destinationId: string;
  oldestUnsettledAt: string | null;
  oldestUnsettledAgeSeconds: number | null;
}

/** The figures of one bucket of receive time. */
export interface LedgerBucket extends LedgerTotals {
  bucketStart: string;
}

/** `GET /api/v1/ledger`. */
export interface Ledger {
  from: string;
  to: string;
  bucketSeconds: number;
  /** An unsettled delivery whose window runs from before this is unaccounted. */
  unaccountedBefore: string;
  parkedDestinations: string[];
  totals: LedgerTotals[];
  buckets: LedgerBucket[];
}

/** One unaccounted delivery, with its last known state. */
export interface UnaccountedDelivery {
  sourceId: string;
  messageId: string;
  destinationId: string;
  state: UnsettledState;
  stateAt: string;
  receivedAt: string;
  /** Where its retry window runs from: received, or the first attempt of its run. */
  windowFrom: string;
  attempts: number;
  lastError: string | null;
  reason: UnaccountedReason;
  message: string;
}

/** `GET /api/v1/ledger/unaccounted`: one page, longest unaccounted first, and the total. */
export interface Unaccounted {
  unaccountedBefore: string;
  total: number;
  unaccounted: UnaccountedDelivery[];
}

const totals = {
  sourceId: isText,
  destinationId: isText,
  accepted: isCount,
  delivered: isCount,
  filtered: isCount,
  dead: isCount,
  inFlight: isCount,
  parked: isCount,
  unaccounted: isCount,
  oldestUnsettledAt: orNull(isTime),
  oldestUnsettledAgeSeconds: orNull(isCount),
};

/** Checks an answer of `GET /api/v1/ledger`. */
export const ledgerAnswer = answerGuard<Ledger>({
  from: isTime,
  to: isTime,
  bucketSeconds: isCount,
  unaccountedBefore: isTime,
  parkedDestinations: listOf(isText),
  totals: listOf(objectOf<LedgerTotals>(totals)),
  buckets: listOf(objectOf<LedgerBucket>({ ...totals, bucketStart: isTime })),
});

/** Checks an answer of `GET /api/v1/ledger/unaccounted`. */
export const unaccountedAnswer = answerGuard<Unaccounted>({
  unaccountedBefore: isTime,
  total: isCount,
  unaccounted: listOf(
    objectOf<UnaccountedDelivery>({
      sourceId: isText,
      messageId: isText,
      destinationId: isText,
      state: oneOf(UNSETTLED_STATES),
      stateAt: isTime,
      receivedAt: isTime,
      windowFrom: isTime,
      attempts: isCount,
      lastError: orNull(isText),
      reason: oneOf(UNACCOUNTED_REASONS),
      message: isText,
    }),
  ),
});
