import { createHash } from 'node:crypto';
import { verifySignature } from '@sluice/webhook-signature';
import type { Behaviour, ReceivedRequest, Reply } from '@sluice/testkit';

/** One arrival of an event at an endpoint, as the receiver logged it. */
export interface Arrival {
  messageId: string;
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
  /** Acknowledged by ingest but neither delivered (2xx at some endpoint) nor dead-lettered. */
  lost: number;
  /** Arrivals at an endpoint after that endpoint had already answered 2xx for the same event. */
  duplicates: number;
  /** Duplicates that fall within a disruption window (a crash/restart/SIGTERM the drill caused). */
  duplicatesExplained: number;
  badSignatures: number;
  badBodies: number;
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** The payload a ledger event carries: the receiver checks `hash` against `payload`. */
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

  private readonly secret?: string;
  constructor(secret?: string) {
    this.secret = secret;
  }

  /** Wraps a receiver behaviour so every request is logged before it is answered. */
  recording(endpoint: string, behaviour: Behaviour = () => ({ status: 200 })): Behaviour {
    return (req: ReceivedRequest, index: number): Reply => {
      const reply = behaviour(req, index);
      this.log(endpoint, req, reply.delayMs && reply.delayMs >= 5_000 ? 0 : reply.status);
      return reply;
    };
  }

  log(endpoint: string, req: ReceivedRequest, status: number): void {
    const text = req.body.toString('utf8');
    let body: { messageId?: string; properties?: { payload?: string; hash?: string } } = {};
    try {
      body = JSON.parse(text);
    } catch {
      /* counted as a bad body below */
    }
    const messageId = String(req.headers['x-message-id'] ?? body.messageId ?? '');
    const props = body.properties;
    const bodyOk = !!props && typeof props.payload === 'string' && sha256(props.payload) === props.hash;
    const signature = req.headers['x-signature'];
    const signatureOk =
      this.secret === undefined
        ? signature === undefined
        : typeof signature === 'string' && verifySignature(this.secret, req.body, signature);
    this.arrivals.push({ messageId, endpoint, at: req.at, status, bodyOk, signatureOk });
  }

  disruption(what: string, from: number, to: number): void {
    this.disruptions.push({ what, from, to });
  }

  summary(slackMs = 10_000): LedgerSummary {
    const deliveredIds = new Set<string>();
    const okAt = new Map<string, number>();
    let duplicates = 0;
    let explained = 0;
    for (const a of [...this.arrivals].sort((x, y) => x.at - y.at)) {
      const key = `${a.messageId}\u0000${a.endpoint}`;
      if (okAt.has(key)) {
        duplicates++;
        if (this.disruptions.some((d) => a.at >= d.from - slackMs && a.at <= d.to + slackMs)) explained++;
      }
      if (a.status >= 200 && a.status < 300) {
        deliveredIds.add(a.messageId);
        if (!okAt.has(key)) okAt.set(key, a.at);
      }
    }
    let lost = 0;
    for (const id of this.acked) if (!deliveredIds.has(id) && !this.deadLettered.has(id)) lost++;
    return {
      sent: this.sent.size,
      acked: this.acked.size,
      delivered: [...this.acked].filter((id) => deliveredIds.has(id)).length,
      deadLettered: [...this.acked].filter((id) => this.deadLettered.has(id)).length,
      lost,
      duplicates,
      duplicatesExplained: explained,
      badSignatures: this.arrivals.filter((a) => !a.signatureOk).length,
      badBodies: this.arrivals.filter((a) => !a.bodyOk).length,
    };
  }

  /** Ids acknowledged but not (yet) delivered or dead-lettered. */
  missing(): string[] {
    const delivered = new Set(this.arrivals.filter((a) => a.status >= 200 && a.status < 300).map((a) => a.messageId));
    return [...this.acked].filter((id) => !delivered.has(id) && !this.deadLettered.has(id));
  }
}

export function formatSummary(name: string, s: LedgerSummary): string {
  return `ledger[${name}]: sent=${s.sent} acked=${s.acked} delivered=${s.delivered} deadLettered=${s.deadLettered} lost=${s.lost} duplicates=${s.duplicates} (explained ${s.duplicatesExplained}) badSignatures=${s.badSignatures} badBodies=${s.badBodies}`;
}
