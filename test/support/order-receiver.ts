import type { Behaviour, ReceivedRequest, Reply } from '@sluice/testkit';

/** A seeded generator (mulberry32): the same seed fails the same requests, run after run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** An event a receiver applied: the first of its arrivals that it answered 2xx. */
export interface AppliedEvent {
  messageId: string;
  /** `userId ?? anonymousId` of the webhook body: the user part of the event's Kafka key. */
  user: string;
  at: number;
}

export interface StatefulReceiverOptions {
  /** Seed of the random failures. */
  seed: number;
  /** Share of requests answered 503 at random (0.1 = 10 %). */
  failRate: number;
  /**
   * One user whose events are all answered 503 for `stuckMs` from the first of them to arrive (or,
   * with `stuckMs` infinite, until `release()`).
   */
  stuckUser?: string;
  stuckMs?: number;
}

/**
 * The receiver a stateful system (a CRM, a subscription store) is: it applies each event once,
 * de-duplicating on `X-Message-Id` (a redelivery of an applied event is answered 200 and not
 * applied again), and keeps what it applied in arrival order. It answers 503 to a seeded random
 * share of requests, and to every event of one stuck user for a while. One event per request
 * (an unbatched destination).
 */
export class StatefulReceiver {
  readonly applied: AppliedEvent[] = [];
  readonly #appliedIds = new Set<string>();
  readonly #random: () => number;
  readonly #options: StatefulReceiverOptions;
  #stuckSince: number | undefined;
  #released = false;

  constructor(options: StatefulReceiverOptions) {
    this.#options = options;
    this.#random = seededRandom(options.seed);
  }

  /** When the stuck user's first event arrived (its 503s run from there). */
  get stuckSince(): number | undefined {
    return this.#stuckSince;
  }

  /** From now on the stuck user's events are answered as any other user's. */
  release(): void {
    this.#released = true;
  }

  readonly behaviour: Behaviour = (req: ReceivedRequest): Reply => {
    const messageId = String(req.headers['x-message-id'] ?? '');
    if (this.#appliedIds.has(messageId)) return { status: 200, body: 'duplicate' };
    const body = JSON.parse(req.body.toString('utf8')) as { userId?: string | null; anonymousId?: string };
    const user = String(body.userId ?? body.anonymousId ?? '');
    const { stuckUser, stuckMs = 0 } = this.#options;
    if (user === stuckUser && !this.#released) {
      this.#stuckSince ??= req.at;
      if (req.at - this.#stuckSince < stuckMs) return { status: 503, body: 'stuck' };
    }
    if (this.#random() < this.#options.failRate) return { status: 503, body: 'random failure' };
    this.#appliedIds.add(messageId);
    this.applied.push({ messageId, user, at: req.at });
    return { status: 200, body: 'applied' };
  };
}
