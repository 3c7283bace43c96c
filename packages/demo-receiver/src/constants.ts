/** Where the bundled demo config (`config/local.yaml`) sends its webhooks. */
export const DEMO_RECEIVER_PORT = 9099;
export const DEMO_RECEIVER_HOST = '127.0.0.1';
export const DEMO_RECEIVER_PATH = '/webhook';
/** Request bodies above this are answered 413 and not printed (webhook bodies are ≤ 32 KB calls). */
export const MAX_BODY_BYTES = 1_000_000;
/** Printed bodies are cut to this many characters so one event stays one readable line. */
export const MAX_PRINTED_BODY_CHARS = 2_000;
