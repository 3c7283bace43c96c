/** Fixed wire values of webhook delivery (docs/reference/delivery.md). */
export const USER_AGENT = 'Sluice/1.0';
export const CONTENT_TYPE = 'application/json';
export const MESSAGE_ID_HEADER = 'X-Message-Id';
/** Bytes of a response body kept in the attempt record (docs/reference/delivery.md: "first 1 KB", KB = 1,000 bytes). */
export const RESPONSE_SNIPPET_BYTES = 1_000;
/** Origin name written on records this service sends to `sluice.rejected`. */
export const REJECT_ORIGIN = 'deliverer';
/** How long attempt/retry/dead-letter records are gathered before one `sendBatch`. */
export const PRODUCE_LINGER_MS = 2;
