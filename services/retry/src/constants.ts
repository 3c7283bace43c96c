/** Header names, group-id suffixes and limits of the retry service, in one place (docs/CONVENTIONS.md). */

/** Consumer group of the intake consumer (`sluice.retry`), appended to `kafka.clientId`. */
export const INTAKE_GROUP_SUFFIX = 'retry';
/** Consumer group of each delay tier: `<clientId>.retry.delay.<tier>`. */
export const TIER_GROUP_SUFFIX = 'retry.delay.';

/**
 * Records the shortest (final-approach) tier may hold in memory per partition while they wait
 * for their due time. Past it, reading that partition pauses until some are forwarded.
 */
export const FINAL_TIER_MAX_HELD_PER_PARTITION = 10_000;

/** Retry-record intake: records handled at once per partition of `sluice.retry`. */
export const INTAKE_IN_FLIGHT_PER_PARTITION = 1_000;

/** Origin written on `sluice.rejected` records from this service. */
export const REJECT_ORIGIN = 'retry';

/**
 * Time a hop between tiers may take (resume timer, fetch, produce, next fetch). A record only rides
 * a delay tier if at least this much of its wait is left after the tier's span, so it never
 * reaches its final tier with too little time left to be forwarded on time.
 */
export const HOP_ALLOWANCE_MS = 500;
