/**
 * The per-user queue of an ordered destination (docs/reference/ordering.md), as pure rules. A user
 * (the record key) is *held* while its head — the event that failed retryably, or an attempt still
 * in flight that later events were parked behind — is not done, and *queued* while events wait
 * behind it on the waiting topic. A waiting record carries its place in the queue, a sequence
 * number, so the state is a few numbers and message ids however many events wait: a park writes
 * O(1) bytes, and a state record stays under `QUEUE_STATE_MAX_BYTES`.
 */
export interface QueueState {
  /** The message id of the event the queue waits for. */
  head?: string;
  /**
   * The head is not in the retry path: an attempt in flight (or parked by a pause) that later
   * events were parked behind. Read again from its source (after a crash, or back from a pause) it
   * is attempted, as the head.
   */
  live?: true;
  /** The sequence number of the oldest waiting record not yet gone. */
  first: number;
  /** The sequence number the next parked event takes; `next - first` events wait. */
  next: number;
  /** The message id parked at `next - 1`: read again after a crash, its record is written again (it may be missing). */
  last?: string;
  /** Body bytes of the waiting events (`ORDERING_MAX_WAITING_BYTES`). */
  bytes: number;
  /** Waiting records below this sequence number are dead-lettered with a dead head (`dead-letter-waiting`). */
  deadUntil?: number;
  /** The dead head they are dead-lettered with (named in their last error). */
  deadHead?: string;
  /** Message ids waiting from a state record of the earlier list format, ahead of the numbered ones (read once at upgrade). */
  legacy?: string[];
  /** How many of `legacy` are to be dead-lettered with `deadHead`. */
  legacyDead?: number;
}

/** What became of one attempt step of a job: the outcomes the queue cares about. */
export type StepOutcome = 'delivered' | 'retrying' | 'dead' | 'parked';

export type OnDeadLetter = 'release' | 'dead-letter-waiting';

/** The most a user may have waiting for one destination. */
export interface WaitingLimits {
  maxEvents: number;
  maxBytes: number;
}

/** The place of a waiting record: its sequence number, or none for a record of the list format. */
export interface WaitingPlace {
  messageId: string;
  seq: number | undefined;
  /** Its body bytes. */
  bytes: number;
}

/**
 * Bytes a state record's value takes at most (no `legacy` list): three message ids (128 visible
 * ASCII characters, at most 258 bytes once JSON-escaped), five integers below 2^53 and the field names.
 */
export const QUEUE_STATE_MAX_BYTES = 1_200;

const emptyQueue = (): QueueState => ({ first: 0, next: 0, bytes: 0 });

/** How many events wait. */
export function waitingCount(q: QueueState): number {
  return q.next - q.first + (q.legacy?.length ?? 0);
}

/** Nothing held and nothing waiting: the state can be deleted. */
export function isIdle(q: QueueState | undefined): boolean {
  return q === undefined || (q.head === undefined && waitingCount(q) === 0);
}

export type FreshDecision =
  /** Attempted now, outside the queue (nothing held, nothing waiting, nothing in flight). */
  | 'attempt'
  /** The live head read again (after a crash, or back from a pause): attempted, as the head. */
  | 'attempt-head'
  /** The head, already in the retry path (or in flight): nothing to do. */
  | 'already'
  /** Parked last, read again after a crash: its record is written again at its place. */
  | 'rewrite'
  | 'wait'
  /** The user's waiting events are at their limit: dead-lettered so the partition keeps moving. */
  | 'full';

/**
 * A new event (live, or back from a pause): attempted now, or parked behind its user's queue or
 * behind an attempt of its user still in flight (`inFlight`).
 */
export function freshDecision(
  q: QueueState | undefined,
  event: { messageId: string; bytes: number; inFlight: boolean },
  limits: WaitingLimits,
): FreshDecision {
  if (q?.head === event.messageId) return q.live && !event.inFlight ? 'attempt-head' : 'already';
  if (q !== undefined && q.last === event.messageId && q.next > q.first) return 'rewrite';
  if (isIdle(q) && !event.inFlight) return 'attempt';
  if (q === undefined) return 'wait';
  const overBytes = q.bytes > 0 && q.bytes + event.bytes > limits.maxBytes;
  return waitingCount(q) >= limits.maxEvents || overBytes ? 'full' : 'wait';
}

/** A retry of `messageId`: the user's head (its outcome moves the queue), or a stray copy (attempted, no effect). */
export function retryDecision(q: QueueState | undefined, messageId: string): 'head' | 'stray' {
  return q?.head === messageId && !q.live ? 'head' : 'stray';
}

/**
 * The queue after `messageId` was parked, and the sequence number its waiting record carries.
 * Parked behind an attempt in flight (`behind`, nothing held yet), that attempt becomes the live head.
 */
export function parked(
  q: QueueState | undefined,
  event: { messageId: string; bytes: number; behind?: string },
): { state: QueueState; seq: number } {
  const base = q ?? emptyQueue();
  const seq = base.next;
  const state: QueueState = { ...base, next: seq + 1, last: event.messageId, bytes: base.bytes + event.bytes };
  if (state.head === undefined && event.behind !== undefined) {
    state.head = event.behind;
    state.live = true;
  }
  return { state, seq };
}

/**
 * A record read from the waiting topic: its turn (`deliver`, or `dead-letter` behind a dead head
 * with `dead-letter-waiting`), not yet (`cycle`), or a copy of an event no longer waiting (`drop`).
 * Not its turn while an attempt of its user is in flight (`inFlight`): nothing overtakes it.
 */
export function waitingDecision(
  q: QueueState | undefined,
  place: WaitingPlace,
  inFlight: boolean,
): 'deliver' | 'dead-letter' | 'cycle' | 'drop' {
  if (q === undefined) return 'drop';
  const held = q.head !== undefined || inFlight;
  if (place.seq === undefined) {
    const legacy = q.legacy ?? [];
    if (!legacy.includes(place.messageId)) return 'drop';
    if (held || legacy[0] !== place.messageId) return 'cycle';
    return (q.legacyDead ?? 0) > 0 ? 'dead-letter' : 'deliver';
  }
  if (place.seq < q.first || place.seq >= q.next) return 'drop';
  if (held || place.seq > q.first || (q.legacy?.length ?? 0) > 0) return 'cycle';
  return place.seq < (q.deadUntil ?? 0) ? 'dead-letter' : 'deliver';
}

/** The queue after the waiting record at its front left it (delivered, dead-lettered, or now the head). */
export function leftWaiting(q: QueueState, place: WaitingPlace): QueueState {
  const next: QueueState = { ...q, bytes: Math.max(0, q.bytes - place.bytes) };
  if (place.seq === undefined) {
    if (q.legacy?.[0] !== place.messageId) return q;
    const legacy = q.legacy.slice(1);
    if (legacy.length > 0) next.legacy = legacy;
    else delete next.legacy;
    const dead = Math.max(0, (q.legacyDead ?? 0) - 1);
    if (dead > 0) next.legacyDead = dead;
    else delete next.legacyDead;
  } else {
    if (place.seq !== q.first) return q;
    next.first = q.first + 1;
    if (next.deadUntil !== undefined && next.first >= next.deadUntil) delete next.deadUntil;
  }
  if (next.deadUntil === undefined && next.legacyDead === undefined) delete next.deadHead;
  if (next.first === next.next) {
    delete next.last;
    if ((next.legacy?.length ?? 0) === 0) next.bytes = 0;
  }
  return next;
}

/**
 * The queue after an attempt step of `messageId` — the user's head, an event taken from the
 * waiting topic (`fromWaiting`), or a fresh event — ended with `outcome`. A retrying event becomes
 * the head; a head delivered or dead-lettered releases the queue (a dead one takes the waiting
 * events with it under `dead-letter-waiting`). An event parked by a pause that others wait behind
 * becomes the live head: back from its parked topic it is attempted before them. Undefined: no state.
 */
export function afterStep(
  q: QueueState | undefined,
  step: { messageId: string; outcome: StepOutcome; onDeadLetter: OnDeadLetter; fromWaiting?: WaitingPlace },
): QueueState | undefined {
  const { messageId, outcome } = step;
  let next = q;
  if (step.fromWaiting && next) next = leftWaiting(next, step.fromWaiting);
  if (outcome === 'retrying') {
    const { live: _live, ...rest } = next ?? emptyQueue();
    return { ...rest, head: messageId };
  }
  if (next === undefined) return undefined;
  if (outcome === 'parked') {
    // The head keeps its kind (a retried head comes back as a retry); a front event that others wait behind leads them.
    if (next.head !== undefined || isIdle(next)) return next;
    return { ...next, head: messageId, live: true };
  }
  if (next.head !== messageId) return next;
  const { head: _released, live: _live, ...rest } = next;
  if (outcome === 'dead' && step.onDeadLetter === 'dead-letter-waiting' && waitingCount(rest) > 0) {
    const dead: QueueState = { ...rest, deadHead: messageId };
    if (rest.next > rest.first) dead.deadUntil = rest.next;
    if ((rest.legacy?.length ?? 0) > 0) dead.legacyDead = rest.legacy!.length;
    return dead;
  }
  return rest;
}

/** A dead-lettered waiting event counts as gone for the queue (`dead-letter-waiting`). */
export function afterDeadLettered(q: QueueState, place: WaitingPlace): QueueState {
  return leftWaiting(q, place);
}

/**
 * A queue of the list format (`{ head?, queue: string[], dead?, deadHead? }`) as a numbered one:
 * the listed ids stay waiting, by id, ahead of any numbered record. Undefined when not that format.
 */
export function fromListFormat(value: unknown): QueueState | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as { head?: unknown; queue?: unknown; dead?: unknown; deadHead?: unknown };
  if (!Array.isArray(v.queue) || !v.queue.every((id) => typeof id === 'string')) return undefined;
  const state: QueueState = emptyQueue();
  if (typeof v.head === 'string') state.head = v.head;
  if (v.queue.length > 0) state.legacy = v.queue as string[];
  const dead = typeof v.dead === 'number' ? Math.min(v.dead, v.queue.length) : 0;
  if (dead > 0) {
    state.legacyDead = dead;
    state.deadHead = typeof v.deadHead === 'string' ? v.deadHead : '';
  }
  return state;
}

/** A numbered queue read from a state record, or undefined when a field is not what it must be. */
export function readQueueState(value: unknown): QueueState | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const int = (x: unknown) => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
  const optString = (x: unknown) => x === undefined || typeof x === 'string';
  if (!int(v.first) || !int(v.next) || !int(v.bytes) || (v.first as number) > (v.next as number)) return undefined;
  if (!optString(v.head) || !optString(v.last) || !optString(v.deadHead)) return undefined;
  if (v.deadUntil !== undefined && !int(v.deadUntil)) return undefined;
  if (v.live !== undefined && v.live !== true) return undefined;
  if (v.legacy !== undefined && !(Array.isArray(v.legacy) && v.legacy.every((id) => typeof id === 'string')))
    return undefined;
  if (v.legacyDead !== undefined && !int(v.legacyDead)) return undefined;
  const state: QueueState = { first: v.first as number, next: v.next as number, bytes: v.bytes as number };
  for (const k of ['head', 'last', 'deadHead'] as const) if (typeof v[k] === 'string') state[k] = v[k];
  if (v.live === true) state.live = true;
  if (v.deadUntil !== undefined) state.deadUntil = v.deadUntil as number;
  if (Array.isArray(v.legacy) && v.legacy.length > 0) state.legacy = v.legacy as string[];
  if (v.legacyDead !== undefined && (v.legacyDead as number) > 0) state.legacyDead = v.legacyDead as number;
  return state;
}
