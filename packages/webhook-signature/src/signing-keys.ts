/**
 * A signing secret with an optional validity window, for rotation. Times are milliseconds since
 * the epoch; a key is active from `notBefore` (inclusive) until `notAfter` (exclusive).
 */
export interface SigningKey {
  secret: string;
  notBefore?: number;
  notAfter?: number;
}

export function isActive(key: SigningKey, nowMs: number): boolean {
  const started = key.notBefore === undefined || nowMs >= key.notBefore;
  return started && (key.notAfter === undefined || nowMs < key.notAfter);
}

/** Every key active at `nowMs`, in the order given (Standard Webhooks sends one signature each). */
export function activeKeys(keys: readonly SigningKey[], nowMs: number): SigningKey[] {
  return keys.filter((key) => isActive(key, nowMs));
}

/**
 * The newest key active at `nowMs`: the one with the latest `notBefore` (a key without one is the
 * oldest); on a tie, the one listed last. This is the key that signs a single-signature header.
 */
export function newestActiveKey(keys: readonly SigningKey[], nowMs: number): SigningKey | undefined {
  let newest: SigningKey | undefined;
  for (const key of keys) {
    if (!isActive(key, nowMs)) continue;
    if (newest === undefined || (key.notBefore ?? -Infinity) >= (newest.notBefore ?? -Infinity)) newest = key;
  }
  return newest;
}
