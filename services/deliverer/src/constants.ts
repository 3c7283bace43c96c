/** Bytes of a response body kept in the attempt record (docs/reference/delivery.md: "first 1 KB", KB = 1,000 bytes). */
export const RESPONSE_SNIPPET_BYTES = 1_000;
/** Origin name written on records this service sends to `sluice.rejected`. */
export const REJECT_ORIGIN = 'deliverer';
/** How long attempt/retry/dead-letter records are gathered before one `sendBatch` when the deliverer was idle. */
export const PRODUCE_LINGER_MS = 2;
/**
 * Under load, the least time between two `sendBatch`es of side records: at 30,000 records/s they
 * leave ~300 to a request instead of ~20 (kafkajs spends ~3× less CPU per record), and a record
 * waits at most this long more for its acknowledgement.
 */
export const PRODUCE_INTERVAL_MS = 10;
