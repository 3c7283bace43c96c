/** HTTP routes of the snapshot API (docs/reference/audiences.md), served beside /metrics, /healthz and /readyz. */
export const ROUTES = {
  audiences: '/v1/audiences/snapshots',
  traits: '/v1/traits/snapshots',
} as const;

/**
 * Largest snapshot chunk, serialised. A chunk travels as one record on `sluice.audiences`, and the
 * broker's default `message.max.bytes` is ~1 MB, so chunks stay below it with room for overhead.
 */
export const MAX_CHUNK_BYTES = 900_000;

/** Longest user id accepted in a snapshot (the compact index stores lengths in 16 bits). */
export const MAX_USER_ID_CHARS = 1_000;

/** Origin written on records this service sends to `sluice.rejected`. */
export const REJECT_ORIGIN = 'audience-sync';

/** Separator inside `sluice.audience-state` keys; cannot appear in JSON-sourced ids unescaped by accident. */
export const KEY_SEPARATOR = '\u0000';
