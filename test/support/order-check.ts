import { percentile } from '../../bench/lib/ingest-load.ts';
import type { Arrival } from './ledger.ts';
import type { AppliedEvent } from './order-receiver.ts';

/** What a destination was sent and what its receiver did with it, for `checkOrder`. */
export interface OrderTrail {
  /** Per user, the ids ingest acknowledged, in the order it accepted them. */
  accepted: ReadonlyMap<string, readonly string[]>;
  /** When ingest acknowledged each id (epoch ms). */
  ackedAt: ReadonlyMap<string, number>;
  /** What the receiver applied, in arrival order (`StatefulReceiver.applied`). */
  applied: readonly AppliedEvent[];
  /** Every arrival at the destination in arrival order, whatever its answer (the ledger's, for this destination). */
  arrivals: readonly Pick<Arrival, 'messageId' | 'at' | 'status'>[];
  /** Ids dead-lettered: a gap the order allows (a dead-lettered head releases its user's queue). */
  deadLettered?: ReadonlySet<string>;
}

/** An applied event that came after a later one of its user. */
export interface Reorder {
  user: string;
  /** Acceptance positions (0-based) of the applied sequence up to and including the offender. */
  appliedPositions: number[];
}

export interface OrderReport {
  users: number;
  accepted: number;
  applied: number;
  /** Users whose applied sequence is not in acceptance order, each with where it broke. */
  reordered: Reorder[];
  /** Accepted, neither applied nor dead-lettered. */
  missing: string[];
  /** Arrivals of an event the receiver had already applied (answered 200, not applied again). */
  duplicates: number;
  /** Of those, arrivals after a later event of the user was applied: a receiver without de-duplication would have applied them out of order. */
  duplicatesAfterLater: number;
  /** Arrivals of an event while an earlier event of its user was neither applied yet nor dead-lettered: it did not wait behind it. */
  attemptsAhead: number;
  /** Per user, ingest's acknowledgement → the receiver applying it, per applied event (ms). */
  latencyByUser: Map<string, number[]>;
  /**
   * The same for the events with nothing to wait for: every earlier event of their user applied
   * when ingest acknowledged them (what ordering should not slow down).
   */
  freeLatencies: number[];
  /**
   * Per user, each applied event's own wait: from when it could go — ingest acknowledged it and
   * every earlier event of its user was applied — to the receiver applying it (ms). At a
   * destination delivering in order, the wait behind its own user's earlier events is what the
   * order asks for; what remains is the pipeline's own cost (its retries, its hand-outs) plus any
   * holding back by other users.
   */
  ownWaitByUser: Map<string, number[]>;
}

/** Per user, the applied sequence against the acceptance order; duplicates, attempts ahead, latencies. */
export function checkOrder(trail: OrderTrail): OrderReport {
  const dead = trail.deadLettered ?? new Set<string>();
  const position = new Map<string, { user: string; index: number }>();
  for (const [user, ids] of trail.accepted) ids.forEach((id, index) => position.set(id, { user, index }));
  const appliedAt = new Map<string, number>();
  const appliedByUser = new Map<string, number[]>();
  const latencyByUser = new Map<string, number[]>();
  for (const a of trail.applied) {
    const at = position.get(a.messageId);
    if (!at || appliedAt.has(a.messageId)) continue;
    appliedAt.set(a.messageId, a.at);
    appliedByUser.set(at.user, [...(appliedByUser.get(at.user) ?? []), at.index]);
    const acked = trail.ackedAt.get(a.messageId);
    if (acked !== undefined) latencyByUser.set(at.user, [...(latencyByUser.get(at.user) ?? []), a.at - acked]);
  }
  const reordered: Reorder[] = [];
  for (const [user, indexes] of appliedByUser) {
    const broken = indexes.findIndex((index, i) => i > 0 && index < indexes[i - 1]!);
    if (broken >= 0) reordered.push({ user, appliedPositions: indexes.slice(0, broken + 1) });
  }
  let duplicates = 0;
  let duplicatesAfterLater = 0;
  let attemptsAhead = 0;
  const answered2xx = new Set<string>();
  for (const a of trail.arrivals) {
    const at = position.get(a.messageId);
    if (!at) continue;
    const ids = trail.accepted.get(at.user)!;
    if (answered2xx.has(a.messageId)) {
      duplicates++;
      if (ids.slice(at.index + 1).some((id) => (appliedAt.get(id) ?? Number.POSITIVE_INFINITY) <= a.at))
        duplicatesAfterLater++;
    } else if (a.status >= 200 && a.status < 300) answered2xx.add(a.messageId);
    const earlierPending = ids
      .slice(0, at.index)
      .some((id) => !dead.has(id) && (appliedAt.get(id) ?? Number.POSITIVE_INFINITY) > a.at);
    if (earlierPending) attemptsAhead++;
  }
  const freeLatencies: number[] = [];
  for (const ids of trail.accepted.values())
    ids.forEach((id, index) => {
      const acked = trail.ackedAt.get(id);
      const applied = appliedAt.get(id);
      if (acked === undefined || applied === undefined) return;
      if (ids.slice(0, index).every((earlier) => (appliedAt.get(earlier) ?? Number.POSITIVE_INFINITY) <= acked))
        freeLatencies.push(applied - acked);
    });
  const ownWaitByUser = new Map<string, number[]>();
  for (const [user, ids] of trail.accepted) {
    let earlierDone = Number.NEGATIVE_INFINITY;
    const waits: number[] = [];
    for (const id of ids) {
      const acked = trail.ackedAt.get(id);
      const applied = appliedAt.get(id);
      if (acked !== undefined && applied !== undefined) waits.push(applied - Math.max(acked, earlierDone));
      if (applied !== undefined) earlierDone = Math.max(earlierDone, applied);
    }
    ownWaitByUser.set(user, waits);
  }
  const missing = [...trail.accepted.values()].flat().filter((id) => !appliedAt.has(id) && !dead.has(id));
  return {
    users: trail.accepted.size,
    accepted: position.size,
    applied: appliedAt.size,
    reordered,
    missing,
    duplicates,
    duplicatesAfterLater,
    attemptsAhead,
    latencyByUser,
    freeLatencies,
    ownWaitByUser,
  };
}

/**
 * Latency percentiles over the events of every user but `except`: per event, and of each user's
 * worst; ack → applied, or with `ownWait` each event's own wait (`OrderReport.ownWaitByUser`).
 */
export function latencyFigures(
  report: OrderReport,
  except: ReadonlySet<string> = new Set(),
  measure: 'ackToApplied' | 'ownWait' = 'ackToApplied',
): { events: number; p50: number; p99: number; max: number; p99UserMax: number } {
  const byUser = measure === 'ownWait' ? report.ownWaitByUser : report.latencyByUser;
  const perUser = [...byUser].filter(([user]) => !except.has(user)).map(([, ms]) => ms);
  const all = perUser.flat();
  return {
    events: all.length,
    p50: percentile(all, 50),
    p99: percentile(all, 99),
    max: Math.max(...all),
    p99UserMax: percentile(
      perUser.map((ms) => Math.max(...ms)),
      99,
    ),
  };
}

export function formatOrderReport(name: string, r: OrderReport, except: ReadonlySet<string> = new Set()): string {
  const l = latencyFigures(r, except);
  const own = latencyFigures(r, except, 'ownWait');
  const examples = r.reordered
    .slice(0, 3)
    .map((x) => `${x.user} applied positions ${x.appliedPositions.join(',')}`)
    .join('; ');
  return (
    `order[${name}]: users=${r.users} accepted=${r.accepted} applied=${r.applied} missing=${r.missing.length} ` +
    `reorderedUsers=${r.reordered.length}${examples ? ` (${examples})` : ''} duplicates=${r.duplicates} ` +
    `(after a later event ${r.duplicatesAfterLater}) attemptsAhead=${r.attemptsAhead} | ack→applied over ` +
    `${l.events} events${except.size ? ` (without ${[...except].join(',')})` : ''}: p50 ${l.p50} ms, p99 ${l.p99} ms, ` +
    `max ${l.max} ms; p99 of each user's worst ${l.p99UserMax} ms; events with nothing earlier pending at ack: ` +
    `${r.freeLatencies.length}, p50 ${percentile(r.freeLatencies, 50)} ms, p99 ${percentile(r.freeLatencies, 99)} ms; ` +
    `own wait (from ack or the user's previous event applied, whichever later): p50 ${own.p50} ms, p99 ${own.p99} ms`
  );
}
