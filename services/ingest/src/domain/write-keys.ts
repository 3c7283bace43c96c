import { hash, timingSafeEqual } from 'node:crypto';
import type { Source } from '@sluice/config';
import { writeKeyDigest } from '@sluice/secret-keyring';

/**
 * The write key of an `Authorization: Basic` header: the user name; a missing colon is accepted
 * (docs/reference/tracking-api.md).
 */
export function writeKeyFromAuthorization(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^\s*basic\s+(\S+)\s*$/i.exec(header);
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const key = colon === -1 ? decoded : decoded.slice(0, colon);
  return key.length > 0 ? key : undefined;
}

// One-shot `hash`: no Hash object per request (~1.5x cheaper than createHash + update + digest).
const digest = (value: string) => hash('sha256', value, 'buffer');

/**
 * Finds the source of a write key (docs/reference/security.md, "Write keys"): by the SHA-256 of the
 * key presented, looked up in a map of the digests of every key in force — the file's keys, digested
 * once per config, and the runtime sources' keys, which are kept only as digests. One digest and one
 * lookup per request, whatever the number of keys. The lookup's time depends on the digest alone, which
 * says nothing of any key (finding a key from a digest is a SHA-256 preimage), so timing reveals
 * neither a key nor where it sits. Memory: one entry (64 characters and a reference) per key in force.
 */
export class WriteKeyIndex {
  readonly #sources = new Map<string, Source>();

  constructor(sources: readonly Source[]) {
    const add = (hex: string, source: Source) => {
      // A key two sources give stays the first one's, as the file lists them.
      if (!this.#sources.has(hex)) this.#sources.set(hex, source);
    };
    for (const source of sources) {
      for (const key of source.writeKeys) add(writeKeyDigest(key), source);
      for (const hex of source.writeKeyDigests ?? []) add(hex, source);
    }
  }

  /** The source whose key in force this is; undefined for an unknown, revoked, empty or missing key. */
  sourceFor(writeKey: string | undefined): Source | undefined {
    if (writeKey === undefined || writeKey === '') return undefined;
    return this.#sources.get(writeKeyDigest(writeKey));
  }
}

/** Constant-time comparison of an admin token (docs/reference/security.md). */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  return timingSafeEqual(digest(expected), digest(given ?? '')) && given !== undefined;
}
