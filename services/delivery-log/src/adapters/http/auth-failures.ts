import { TokenBucket } from '@sluice/service-kit';
import { AUTH_FAILURE_CLIENTS, AUTH_FAILURES, LIMITED_HELD } from '../../constants.ts';

/**
 * Failed authentications per client address (docs/reference/tokens.md, "Failed authentications"):
 * each failure takes one from the address's bucket (`AUTH_FAILURES`); an address whose bucket is
 * empty is answered 429 until it refills, whatever token it sends, so guessing tokens stays slow.
 * At most `AUTH_FAILURE_CLIENTS` addresses are held, the one seen least recently forgotten first.
 * The `429`s held before they are sent are counted too, per address and in all (`LIMITED_HELD`).
 */
export class AuthFailures {
  readonly #buckets = new Map<string, TokenBucket>();
  /** Per address, its `429`s held now; an address holding none is not in it. */
  readonly #held = new Map<string, number>();
  #heldInAll = 0;
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Milliseconds until the address may try again: 0 when it may now. */
  waitMs(client: string): number {
    const bucket = this.#buckets.get(client);
    return bucket === undefined ? 0 : Math.ceil(bucket.shortfallMs(1, this.#now()));
  }

  /** Counts one failure of the address. */
  failed(client: string): void {
    const now = this.#now();
    let bucket = this.#buckets.get(client);
    if (bucket === undefined) {
      bucket = new TokenBucket(AUTH_FAILURES.perSecond, AUTH_FAILURES.burst, now);
      if (this.#buckets.size >= AUTH_FAILURE_CLIENTS) this.#buckets.delete(this.#buckets.keys().next().value!);
    } else this.#buckets.delete(client);
    this.#buckets.set(client, bucket);
    bucket.take(1, now);
  }

  /**
   * Takes a place for one held `429` of the address: false when the address holds
   * `LIMITED_HELD.perClient` already or all addresses `LIMITED_HELD.total` (that one is sent at once).
   * A place taken is given back with `release`.
   */
  hold(client: string): boolean {
    const held = this.#held.get(client) ?? 0;
    if (held >= LIMITED_HELD.perClient || this.#heldInAll >= LIMITED_HELD.total) return false;
    this.#held.set(client, held + 1);
    this.#heldInAll++;
    return true;
  }

  /** Gives back a place `hold` took. */
  release(client: string): void {
    const held = this.#held.get(client);
    if (held === undefined) return;
    if (held <= 1) this.#held.delete(client);
    else this.#held.set(client, held - 1);
    this.#heldInAll--;
  }
}
