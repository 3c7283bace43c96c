import { createHash } from 'node:crypto';

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
  /**
   * Names the current run of the queue's numbering: a park into a queue with nothing waiting starts
   * a new one (`parked`), and each waiting record carries the run it was parked in. A record of an
   * earlier run read again (its offset not committed before a crash) is a copy, even where its
   * number is a place of the new run. Absent in records of earlier versions (their runs match each other).
   */
  epoch?: string;
  /** The sequence number of the oldest waiting record not yet gone. */
  first: number;
  /** The sequence number the next parked event takes; `next - first` events wait. */
  next: number;
  /** The message id parked at `next - 1` (records of an earlier format): read again after a crash, its record is written again. */
  last?: string;
  /**
   * The parks whose waiting records may not be written yet: the tags (`parkTag`) of the events at
   * `from`, `from + 1`, …, at most `PARK_TAIL_MAX`. Read again after a crash, such an event writes
   * its record again at its place, so no place of the queue stays without a record.
   */
  tail?: ParkTail;
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

/** The parks of a queue whose waiting records may be missing: tags of consecutive places from `from`. */
export interface ParkTail {
  from: number;
  tags: string[];
}

/**
 * The most parks of one queue whose waiting records are not yet known written: a further park
 * waits for the oldest of them, or (one from before a restart) pushes it out. Bounds the state
 * record (each tag 11 characters).
 */
export const PARK_TAIL_MAX = 32;

/** A short tag of a message id (8 bytes of its SHA-256, base64url): names a park in `tail`. */
export function parkTag(messageId: string): string {
  return createHash('sha256').update(messageId).digest().subarray(0, 8).toString('base64url');
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
  /** The run of numbering it was parked in (`QueueState.epoch`). */
  epoch?: string;
  /** Its body bytes. */
  bytes: number;
  /** A gap: a park whose waiting record Kafka refused (its event was rejected); the queue moves past it at its turn. */
  gap?: true;
}

/**
 * Bytes a state record's value takes at most (no `legacy` list): three message ids (128 visible
 * ASCII characters, at most 258 bytes once JSON-escaped), six integers below 2^53, `PARK_TAIL_MAX`
 * tags of 11 characters, an epoch (`EPOCH_MAX_LENGTH`) and the field names.
 */
export const QUEUE_STATE_MAX_BYTES = 1_700;

/** The longest epoch read from a state record or a waiting record's header. */
export const EPOCH_MAX_LENGTH = 16;

/** Whether a value read from a state record or a waiting header is an epoch (`QueueState.epoch`). */
export function isEpoch(value: unknown): value is string {
  return typeof value === 'string' && value.length <= EPOCH_MAX_LENGTH;
}

const emptyQueue = (): QueueState => ({ first: 0, next: 0, bytes: 0 });

/** Whether a waiting record was parked in the queue's current run of numbering (`QueueState.epoch`). */
export function inCurrentRun(q: QueueState, place: WaitingPlace): boolean {
  return (place.epoch ?? '') === (q.epoch ?? '');
}

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
  if (unwrittenPlace(q, event.messageId) !== undefined) return 'rewrite';
  if (isIdle(q) && !event.inFlight) return 'attempt';
  if (q === undefined) return 'wait';
  const overBytes = q.bytes > 0 && q.bytes + event.bytes > limits.maxBytes;
  return waitingCount(q) >= limits.maxEvents || overBytes ? 'full' : 'wait';
}

/**
 * The place of `messageId` when its waiting record may be missing (it is in the queue's `tail`, or
 * is `last` of a record of the earlier format): read again, it writes its record there.
 */
export function unwrittenPlace(q: QueueState | undefined, messageId: string): number | undefined {
  if (q === undefined || q.next <= q.first) return undefined;
  if (q.tail) {
    const i = q.tail.tags.indexOf(parkTag(messageId));
    const seq = q.tail.from + i;
    if (i >= 0 && seq >= q.first && seq < q.next) return seq;
  }
  return q.last === messageId ? q.next - 1 : undefined;
}

/** Whether a further park must wait for the oldest park of `tail` to be written. */
export function tailFull(q: QueueState | undefined): boolean {
  return (q?.tail?.tags.length ?? 0) >= PARK_TAIL_MAX;
}

/** The queue without the parks of its tail that `written` says are written, from the oldest on. */
export function trimTail(q: QueueState | undefined, written: (seq: number) => boolean): QueueState | undefined {
  const tail = q?.tail;
  if (!q || !tail) return q;
  let n = 0;
  while (n < tail.tags.length && written(tail.from + n)) n++;
  if (n === 0) return q;
  return withTail(q, { from: tail.from + n, tags: tail.tags.slice(n) });
}

function withTail(q: QueueState, tail: ParkTail): QueueState {
  const { tail: _old, ...rest } = q;
  return tail.tags.length > 0 ? { ...rest, tail } : rest;
}

/** A retry of `messageId`: the user's head (its outcome moves the queue), or a stray copy (attempted, no effect). */
export function retryDecision(q: QueueState | undefined, messageId: string): 'head' | 'stray' {
  return q?.head === messageId && !q.live ? 'head' : 'stray';
}

/**
 * The queue after `messageId` was parked, and the sequence number its waiting record carries.
 * Parked behind an attempt in flight (`behind`, nothing held yet), that attempt becomes the live head.
 * Parked with nothing waiting, it starts a new run of numbering named `epoch` (a fresh random id
 * the caller draws), so no record of an earlier run is taken for one of this run.
 */
export function parked(
  q: QueueState | undefined,
  event: { messageId: string; bytes: number; behind?: string; epoch: string },
): { state: QueueState; seq: number } {
  const { last, ...base } = q ?? emptyQueue();
  if (base.next === base.first && (base.legacy?.length ?? 0) === 0) base.epoch = event.epoch;
  const seq = base.next;
  const tag = parkTag(event.messageId);
  let tail: ParkTail;
  if (base.tail && base.tail.from + base.tail.tags.length === seq) {
    // Full: the oldest park leaves it (the caller waits while that one's record is being written).
    const kept = base.tail.tags.slice(Math.max(0, base.tail.tags.length - PARK_TAIL_MAX + 1));
    tail = { from: seq - kept.length, tags: [...kept, tag] };
  }
  // A record of the earlier format names its last park by id: it stays covered, as the tail's first.
  else if (last !== undefined && seq > base.first) tail = { from: seq - 1, tags: [parkTag(last), tag] };
  else tail = { from: seq, tags: [tag] };
  const state: QueueState = { ...base, next: seq + 1, bytes: base.bytes + event.bytes, tail };
  if (state.head === undefined && event.behind !== undefined) {
    state.head = event.behind;
    state.live = true;
  }
  return { state, seq };
}

/** Whether an attempt of a user is in flight, as `waitingDecision` is told. */
export type UserAttempt = 'in-flight' | 'idle';

/**
 * A record read from the waiting topic: its turn (`deliver`, or `dead-letter` behind a dead head
 * with `dead-letter-waiting`), not yet (`cycle`), or a copy of an event no longer waiting (`drop`).
 * Not its turn while an attempt of its user is in flight (`in-flight`): nothing overtakes it.
 */
export function waitingDecision(
  q: QueueState | undefined,
  place: WaitingPlace,
  user: UserAttempt,
): 'deliver' | 'dead-letter' | 'cycle' | 'drop' {
  if (q === undefined) return 'drop';
  const held = q.head !== undefined || user === 'in-flight';
  if (place.seq === undefined) {
    const legacy = q.legacy ?? [];
    if (!legacy.includes(place.messageId)) return 'drop';
    if (held || legacy[0] !== place.messageId) return 'cycle';
    return (q.legacyDead ?? 0) > 0 ? 'dead-letter' : 'deliver';
  }
  if (place.seq < q.first || place.seq >= q.next || !inCurrentRun(q, place)) return 'drop';
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
    if (place.seq !== q.first || !inCurrentRun(q, place)) return q;
    next.first = q.first + 1;
    if (next.deadUntil !== undefined && next.first >= next.deadUntil) delete next.deadUntil;
  }
  if (next.deadUntil === undefined && next.legacyDead === undefined) delete next.deadHead;
  if (next.tail && next.tail.from < next.first) {
    const gone = Math.min(next.first - next.tail.from, next.tail.tags.length);
    const tags = next.tail.tags.slice(gone);
    if (tags.length > 0) next.tail = { from: next.tail.from + gone, tags };
    else delete next.tail;
  }
  if (next.first === next.next) {
    delete next.last;
    delete next.tail;
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
  if (v.epoch !== undefined && !isEpoch(v.epoch)) return undefined;
  if (v.deadUntil !== undefined && !int(v.deadUntil)) return undefined;
  if (v.live !== undefined && v.live !== true) return undefined;
  if (v.legacy !== undefined && !(Array.isArray(v.legacy) && v.legacy.every((id) => typeof id === 'string')))
    return undefined;
  if (v.legacyDead !== undefined && !int(v.legacyDead)) return undefined;
  if (v.tail !== undefined && !readTail(v.tail)) return undefined;
  const state: QueueState = { first: v.first as number, next: v.next as number, bytes: v.bytes as number };
  for (const k of ['head', 'last', 'deadHead', 'epoch'] as const) if (typeof v[k] === 'string') state[k] = v[k];
  if (v.live === true) state.live = true;
  if (v.deadUntil !== undefined) state.deadUntil = v.deadUntil as number;
  if (Array.isArray(v.legacy) && v.legacy.length > 0) state.legacy = v.legacy as string[];
  if (v.legacyDead !== undefined && (v.legacyDead as number) > 0) state.legacyDead = v.legacyDead as number;
  const tail = readTail(v.tail);
  if (tail && tail.tags.length > 0) state.tail = tail;
  return state;
}

function readTail(value: unknown): ParkTail | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { from, tags } = value as { from?: unknown; tags?: unknown };
  if (typeof from !== 'number' || !Number.isSafeInteger(from) || from < 0) return undefined;
  if (!Array.isArray(tags) || tags.length > PARK_TAIL_MAX) return undefined;
  if (!tags.every((t) => typeof t === 'string' && t.length <= 16)) return undefined;
  return { from, tags: tags as string[] };
}
