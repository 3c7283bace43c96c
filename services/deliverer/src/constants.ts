/** Bytes of a response body kept in the attempt record (docs/reference/delivery.md: "first 1 KB", KB = 1,000 bytes). */
export const RESPONSE_SNIPPET_BYTES = 1_000;
/** Origin name written on records this service sends to `sluice.rejected`. */
export const REJECT_ORIGIN = 'deliverer';
/** How long attempt/retry/dead-letter records are gathered before one `sendBatch`. */
export const PRODUCE_LINGER_MS = 2;
