import { deliveryKey, messageKey } from './keys.ts';
import type { AttemptEntry, DeadEntry, EventEntry, FilteredEntry, WaitingEntry } from './records.ts';
import { advance, type DeliveryState, type Fact, type StateAt } from './state.ts';

/** One row of `deliveries`: a message at a destination, as stored and as written back. */
export interface DeliveryRow {
  sourceId: string;
  messageId: string;
  destinationId: string;
  state: DeliveryState;
  /** Epoch ms of the fact that set the state. */
  stateAt: number;
  /** Epoch ms the message was received. */
  receivedAt: number;
  attempts: number;
  lastError: string | null;
  deadReason: string | null;
}

/** What one batch folds into the delivery states. */
export interface FoldInput {
  /** The stored rows of the messages the batch touches that existed before it. */
  current: readonly DeliveryRow[];
  /** Events stored by this batch (new, or filling in a message made earlier from attempts). */
  events: readonly Pick<EventEntry, 'sourceId' | 'messageId' | 'receivedAt' | 'destinationIds'>[];
  /** Attempts not seen before. */
  attempts: readonly AttemptEntry[];
  deaths: readonly DeadEntry[];
  /** Destinations whose filter refused the event (each read again folds to the same state). */
  filtered?: readonly Pick<FilteredEntry, 'sourceId' | 'messageId' | 'destinationId' | 'at'>[];
  /** Events of an ordered destination waiting behind an earlier event of their user. */
  waiting?: readonly Pick<WaitingEntry, 'sourceId' | 'messageId' | 'destinationId' | 'at' | 'waitingFor'>[];
  /** Receive time of each message of the batch (by `messageKey`). */
  receivedAt: ReadonlyMap<string, number>;
}

interface Step {
  fact: Fact;
  attempt: boolean;
  error: string | null;
  deadReason?: string;
}

interface Folding {
  key: { sourceId: string; messageId: string; destinationId: string };
  state: StateAt | undefined;
  received: number | undefined;
  attempts: number;
  lastError: string | null;
  deadReason: string | null;
  steps: Step[];
  changed: boolean;
}

/** The error an attempt leaves as the delivery's last error (none for a success). */
export function attemptError(a: Pick<AttemptEntry, 'outcome' | 'error' | 'status'>): string | null {
  if (a.outcome === 'success') return null;
  return a.error ?? (a.status !== undefined ? `http_${a.status}` : 'failed');
}

/**
 * The delivery rows a batch changes, each once: a stored event adds a `delivering` row per
 * destination it is routed to and gives its receive time to the rows made earlier from attempts;
 * the batch's attempts, deaths and filter refusals are applied in time order to each message's state at each
 * destination (`advance`), from the row as stored. Pure: the same input gives the same rows.
 */
export function foldDeliveries(input: FoldInput): DeliveryRow[] {
  const rows = new Map<string, Folding>();
  const byMessage = new Map<string, Folding[]>();
  const row = (sourceId: string, messageId: string, destinationId: string): Folding => {
    const key = { sourceId, messageId, destinationId };
    let r = rows.get(deliveryKey(key));
    if (!r) {
      r = {
        key,
        state: undefined,
        received: undefined,
        attempts: 0,
        lastError: null,
        deadReason: null,
        steps: [],
        changed: false,
      };
      rows.set(deliveryKey(key), r);
      const list = byMessage.get(messageKey(key)) ?? [];
      list.push(r);
      byMessage.set(messageKey(key), list);
    }
    return r;
  };
  for (const c of input.current) {
    const r = row(c.sourceId, c.messageId, c.destinationId);
    r.state = { state: c.state, at: c.stateAt };
    r.received = c.receivedAt;
    r.attempts = c.attempts;
    r.lastError = c.lastError;
    r.deadReason = c.deadReason;
  }
  for (const e of input.events) {
    for (const r of byMessage.get(messageKey(e)) ?? []) {
      if (r.received !== e.receivedAt) {
        r.received = e.receivedAt;
        r.changed = true;
      }
    }
    for (const d of e.destinationIds) {
      const r = row(e.sourceId, e.messageId, d);
      if (r.state !== undefined) continue;
      r.state = { state: 'delivering', at: e.receivedAt };
      r.received = e.receivedAt;
      r.changed = true;
    }
  }
  for (const a of input.attempts) {
    row(a.sourceId, a.messageId, a.destinationId).steps.push({
      fact: { kind: 'attempt', outcome: a.outcome, at: a.at },
      attempt: true,
      error: attemptError(a),
    });
  }
  for (const d of input.deaths) {
    row(d.sourceId, d.messageId, d.destinationId).steps.push({
      fact: { kind: 'dead', at: d.at },
      attempt: false,
      error: d.lastError ?? null,
      deadReason: d.reason,
    });
  }
  for (const f of input.filtered ?? []) {
    row(f.sourceId, f.messageId, f.destinationId).steps.push({
      fact: { kind: 'filtered', at: f.at },
      attempt: false,
      error: null,
    });
  }
  for (const w of input.waiting ?? []) {
    row(w.sourceId, w.messageId, w.destinationId).steps.push({
      fact: { kind: 'waiting', at: w.at },
      attempt: false,
      error: `waiting for ${w.waitingFor}`,
    });
  }
  const writes: DeliveryRow[] = [];
  for (const r of rows.values()) {
    for (const step of r.steps.sort((a, b) => a.fact.at - b.fact.at)) {
      const next = advance(r.state, step.fact);
      if (step.attempt) r.attempts += 1;
      if (r.state === undefined || next.state !== r.state.state || next.at !== r.state.at) {
        if (step.error !== null) r.lastError = step.error;
        r.deadReason = next.state === 'dead' ? (step.deadReason ?? r.deadReason) : null;
      }
      r.state = next;
      r.changed = true;
    }
    if (!r.changed || r.state === undefined) continue;
    writes.push({
      ...r.key,
      state: r.state.state,
      stateAt: r.state.at,
      receivedAt: r.received ?? input.receivedAt.get(messageKey(r.key)) ?? r.state.at,
      attempts: r.attempts,
      lastError: r.lastError,
      deadReason: r.deadReason,
    });
  }
  return writes;
}
