/** The `format` of a catalog record's value; a record of another format is refused when read. */
export const RECORD_FORMAT = 1;

/**
 * Bytes (UTF-8) of a record's value at most: 64 KiB, a sixteenth of Kafka's default 1 MB message
 * size, so a record always fits a batch with room to spare. Five endpoints with twenty headers each
 * and a full filter stay well below it; a definition whose record would pass it is refused.
 */
export const MAX_RECORD_BYTES = 64 * 1024;

/** Random bytes that make each record's key (`<id>@<nonce>`) new: 8, so two writers never pick the same one. */
export const KEY_NONCE_BYTES = 8;

/** A token's name, and a tenant's id wherever a record names one: an id's characters, at most 100. */
export const NAME_PATTERN = /^[A-Za-z0-9._-]{1,100}$/;
/** `NAME_PATTERN` as a refusal says it. */
export const NAME_RULE = '1–100 of A-Z a-z 0-9 . _ -';

/** Characters of a record's `updatedBy` at most. */
export const MAX_UPDATED_BY_CHARS = 200;

/** How long the old signing secret keeps signing after a rotation when the request names no overlap: 24 hours. */
export const DEFAULT_ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1_000;

/**
 * The HTTP status each outcome of a catalog change stands for (docs/reference/runtime-destinations.md,
 * docs/reference/runtime-sources.md).
 */
export const OUTCOME_STATUS = {
  created: 201,
  updated: 200,
  rotated: 200,
  deleted: 200,
  key_minted: 201,
  key_revoked: 200,
  invalid: 400,
  not_found: 404,
  key_not_found: 404,
  id_taken: 409,
  id_reserved: 409,
  file_declared: 409,
  source_in_use: 409,
  already_revoked: 409,
  version_conflict: 412,
  too_large: 413,
} as const;

/** Random bytes of a tenant token of the delivery log's API: 32 (256 bits), base64url after its prefix. */
export const TOKEN_BYTES = 32;

/** What starts every tenant token, so a leaked one is recognised for what it is (`slt_`: Sluice token). */
export const TOKEN_PREFIX = 'slt_';

/** Tenant tokens in force at most: 1,000, so each replica's lookup of a request's token stays small. */
export const MAX_TOKENS = 1_000;

/**
 * Write keys a runtime source holds in force at most: 10, room for a rotation or two per client;
 * a key minted past them is refused, so revoke one first.
 */
export const MAX_ACTIVE_WRITE_KEYS = 10;

/**
 * Revoked write keys a runtime source's record keeps (their ids and times, for the API to show):
 * the 10 revoked last; a revocation past them drops the one revoked first. With the keys in force,
 * a source's record stays under 5 KB.
 */
export const MAX_REVOKED_WRITE_KEYS = 10;
