import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * True when the `Authorization` header is `Bearer <token>`. Compares digests in constant time, so
 * neither the token's content nor its length leaks through timing.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (header === undefined || header.length > 4_096) return false;
  const match = /^Bearer (.+)$/i.exec(header);
  return timingSafeEqual(digest(match?.[1] ?? ''), digest(token)) && match !== null;
}
