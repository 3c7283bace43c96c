import { TokenBucket } from '@sluice/service-kit';
import { AUTH_FAILURE_CLIENTS, AUTH_FAILURES } from '../../constants.ts';

/**
 * Failed authentications per client address (docs/reference/tokens.md, "Failed authentications"):
 * each failure takes one from the address's bucket (`AUTH_FAILURES`); an address whose bucket is
 * empty is answered 429 until it refills, whatever token it sends, so guessing tokens stays slow.
 * At most `AUTH_FAILURE_CLIENTS` addresses are held, the one seen least recently forgotten first.
 */
export class AuthFailures {
  readonly #buckets = new Map<string, TokenBucket>();
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
}
