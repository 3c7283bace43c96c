import { createHash } from 'node:crypto';
import { verifySignature } from '@sluice/webhook-signature';
import type { Behaviour, ReceivedRequest, Reply } from '@sluice/testkit';

/** One arrival of an event at an endpoint, as the receiver logged it. */
export interface Arrival {
  messageId: string;
  /** The destination whose endpoint logged it (a pipeline may have several). */
  destination: string;
  endpoint: string;
  at: number;
  /** What the endpoint answered (a duplicate after a 2xx is a true duplicate; after 5xx, a retry). */
  status: number;
  bodyOk: boolean;
  signatureOk: boolean;
}

export interface LedgerSummary {
  sent: number;
  acked: number;
  delivered: number;
  deadLettered: number;
  /**
   * Acknowledged by ingest but, for some destination, neither delivered (2xx at one of its
   * endpoints) nor dead-lettered: counted once per destination that misses it.
   */
  lost: number;
  /** Arrivals at an endpoint after that endpoint had already answered 2xx for the same event. */
  duplicates: number;
  /** Duplicates that fall within a disruption window (a crash/restart/SIGTERM the drill caused). */
  duplicatesExplained: number;
  badSignatures: number;
  badBodies: number;
}

/** What became of the acknowledged events at one destination (`Ledger.accounts`). */
export interface DestinationAccount {
  accepted: number;
  delivered: number;
  dead: number;
  inFlight: number;
}

/** The destination of a pipeline with one (`recording` without a name). */
export const DEFAULT_DESTINATION = 'ledger-hooks';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** The payload a ledger event carries (an identify in its traits): the receiver checks `hash` against `payload`. */
export function ledgerProperties(seq: number): { seq: number; payload: string; hash: string } {
  const payload = `${seq}:${Math.random().toString(36).slice(2)}:${'x'.repeat(64)}`;
  return { seq, payload, hash: sha256(payload) };
}

/**
 * The end-to-end ledger: what was sent and acknowledged, what every receiver got,
 * what was dead-lettered; `summary()` says what was lost and explains duplicates.
 */
export class Ledger {
  readonly sent = new Set<string>();
  readonly acked = new Set<string>();
  readonly arrivals: Arrival[] = [];
  readonly deadLettered = new Set<string>();
  readonly disruptions: { from: number; to: number; what: string }[] = [];
  /** Every destination a receiver logs for (`recording`). */
  readonly destinations = new Set<string>();

  private readonly secret?: string;
  constructor(secret?: string) {
    this.secret = secret;
  }

  /** Wraps a receiver behaviour so every request is logged before it is answered. */
  recording(
    endpoint: string,
    behaviour: Behaviour = () => ({ status: 200 }),
    destination = DEFAULT_DESTINATION,
  ): Behaviour {
    this.destinations.add(destination);
    return (req: ReceivedRequest, index: number): Reply => {
      const reply = behaviour(req, index);
      this.log(endpoint, req, reply.delayMs && reply.delayMs >= 5_000 ? 0 : reply.status, destination);
      return reply;
    };
  }

  /**
   * Logs one request: one arrival for a single event, one per event for a batch (docs/reference/batches.md),
   * each with the request's signature check (over the whole body) and its own body check.
   */
  log(endpoint: string, req: ReceivedRequest, status: number, destination = DEFAULT_DESTINATION): void {
    const text = req.body.toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      /* counted as a bad body below */
    }
    const signature = req.headers['x-signature'];
    const signatureOk =
      this.secret === undefined
        ? signature === undefined
        : typeof signature === 'string' && verifySignature(this.secret, req.body, signature);
    const arrive = (messageId: string, event: unknown) => {
      // An identify carries the ledger payload in its traits, the other calls in their properties.
      type Payload = { payload?: string; hash?: string };
      const e = event as { properties?: Payload; traits?: Payload } | undefined;
      const props = e?.properties ?? e?.traits;
      const bodyOk = !!props && typeof props.payload === 'string' && sha256(props.payload) === props.hash;
      this.arrivals.push({ messageId, destination, endpoint, at: req.at, status, bodyOk, signatureOk });
    };
    if (req.headers['x-batch-id'] !== undefined) {
      const batch = (body ?? {}) as { messageIds?: unknown; events?: unknown };
      const ids = Array.isArray(batch.messageIds) ? batch.messageIds : [];
      const events = Array.isArray(batch.events) ? batch.events : [];
      if (ids.length === 0 || ids.length !== events.length) arrive('', undefined);
      else ids.forEach((id, i) => arrive(String(id), events[i]));
      return;
    }
    arrive(String(req.headers['x-message-id'] ?? (body as { messageId?: string } | undefined)?.messageId ?? ''), body);
  }

  disruption(what: string, from: number, to: number): void {
    this.disruptions.push({ what, from, to });
  }

  summary(slackMs = 10_000): LedgerSummary {
    const delivered = this.#deliveredPerDestination();
    const { duplicates, unexplained } = this.duplicates(slackMs);
    const explained = duplicates - unexplained.length;
    const everywhere = (id: string) => [...delivered.values()].every((ids) => ids.has(id));
    return {
      sent: this.sent.size,
      acked: this.acked.size,
      delivered: [...this.acked].filter(everywhere).length,
      deadLettered: [...this.acked].filter((id) => this.deadLettered.has(id)).length,
      lost: this.#missing(delivered).length,
      duplicates,
      duplicatesExplained: explained,
      badSignatures: this.arrivals.filter((a) => !a.signatureOk).length,
      badBodies: this.arrivals.filter((a) => !a.bodyOk).length,
    };
  }

  /**
   * Per destination, what became of the acknowledged events: delivered there (a 2xx at one of its
   * endpoints), else dead-lettered, else still in flight; accepted = delivered + dead + inFlight.
   */
  accounts(): Map<string, DestinationAccount> {
    const accounts = new Map<string, DestinationAccount>();
    for (const [destination, ids] of this.#deliveredPerDestination()) {
      const delivered = [...this.acked].filter((id) => ids.has(id)).length;
      const dead = [...this.acked].filter((id) => !ids.has(id) && this.deadLettered.has(id)).length;
      accounts.set(destination, {
        accepted: this.acked.size,
        delivered,
        dead,
        inFlight: this.acked.size - delivered - dead,
      });
    }
    return accounts;
  }

  /**
   * Arrivals at an endpoint after it had answered 2xx for the same event: how many, and those not
   * within `slackMs` of a disruption, each with when that endpoint first answered 2xx for it.
   */
  duplicates(slackMs = 10_000): { duplicates: number; unexplained: (Arrival & { firstOkAt: number })[] } {
    const okAt = new Map<string, number>();
    let duplicates = 0;
    const unexplained: (Arrival & { firstOkAt: number })[] = [];
    for (const a of [...this.arrivals].sort((x, y) => x.at - y.at)) {
      const key = `${a.messageId}\u0000${a.endpoint}`;
      const firstOkAt = okAt.get(key);
      if (firstOkAt !== undefined) {
        duplicates++;
        if (!this.disruptions.some((d) => a.at >= d.from - slackMs && a.at <= d.to + slackMs))
          unexplained.push({ ...a, firstOkAt });
      }
      if (a.status >= 200 && a.status < 300 && firstOkAt === undefined) okAt.set(key, a.at);
    }
    return { duplicates, unexplained };
  }

  /** Per destination missing an event, the ids acknowledged but neither delivered there nor dead-lettered. */
  missing(): string[] {
    return this.#missing(this.#deliveredPerDestination());
  }

  #missing(delivered: Map<string, Set<string>>): string[] {
    const missing: string[] = [];
    for (const ids of delivered.values())
      for (const id of this.acked) if (!ids.has(id) && !this.deadLettered.has(id)) missing.push(id);
    return missing;
  }

  #deliveredPerDestination(): Map<string, Set<string>> {
    const delivered = new Map<string, Set<string>>([...this.destinations].map((d) => [d, new Set<string>()]));
    if (delivered.size === 0) delivered.set(DEFAULT_DESTINATION, new Set());
    for (const a of this.arrivals)
      if (a.status >= 200 && a.status < 300) {
        let ids = delivered.get(a.destination);
        if (!ids) delivered.set(a.destination, (ids = new Set()));
        ids.add(a.messageId);
      }
    return delivered;
  }
}

/** Where an event sits on `sluice.events`. */
export interface Position {
  partition: number;
  offset: number;
}

/**
 * How far a destination's deliveries strayed from the order of `sluice.events`, per partition: for
 * each event, how many events of its partition with a higher offset were delivered (first 2xx)
 * before it. 0 everywhere is exact arrival order; concurrent requests per partition
 * (`delivery.maxInFlightPerPartition`) can swap neighbours within that window, never more.
 */
export function overtakes(
  arrivals: readonly Arrival[],
  destination: string,
  positions: ReadonlyMap<string, Position>,
): { events: number; maxOvertake: number; overtaken: number } {
  const seen = new Set<string>();
  const delivered = new Map<number, number[]>();
  for (const a of arrivals) {
    if (a.destination !== destination || a.status < 200 || a.status >= 300 || seen.has(a.messageId)) continue;
    const at = positions.get(a.messageId);
    if (!at) continue;
    seen.add(a.messageId);
    const list = delivered.get(at.partition) ?? [];
    list.push(at.offset);
    delivered.set(at.partition, list);
  }
  let maxOvertake = 0;
  let overtaken = 0;
  for (const offsets of delivered.values()) {
    const before: number[] = [];
    for (const offset of offsets) {
      const ahead = before.filter((o) => o > offset).length;
      if (ahead > 0) overtaken++;
      if (ahead > maxOvertake) maxOvertake = ahead;
      before.push(offset);
    }
  }
  return { events: seen.size, maxOvertake, overtaken };
}

export function formatSummary(name: string, s: LedgerSummary): string {
  return `ledger[${name}]: sent=${s.sent} acked=${s.acked} delivered=${s.delivered} deadLettered=${s.deadLettered} lost=${s.lost} duplicates=${s.duplicates} (explained ${s.duplicatesExplained}) badSignatures=${s.badSignatures} badBodies=${s.badBodies}`;
}
