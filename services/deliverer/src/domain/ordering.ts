/**
 * The per-user queue of an ordered destination (docs/reference/ordering.md), as pure rules. A user
 * (the record key) is *held* while its head — the event that failed retryably — goes round the
 * retry path, and *queued* while events wait behind it on the waiting topic. Events are named by
 * their message id: a copy a crash left behind is told from the event whose turn it is by it.
 */
export interface KeyQueue {
  /** The message id of the event in the retry path that the queue waits for. */
  head?: string;
  /** Message ids waiting on the waiting topic, in acceptance order. */
  queue: string[];
  /** How many of the queue's first events are to be dead-lettered with a dead head (`dead-letter-waiting`). */
  dead?: number;
  /** The dead head they are dead-lettered with (named in their last error). */
  deadHead?: string;
}

/** What became of one attempt step of a job: the outcomes the queue cares about. */
export type StepOutcome = 'delivered' | 'retrying' | 'dead' | 'parked';

export type OnDeadLetter = 'release' | 'dead-letter-waiting';

/** A new event (live, or back from a pause): attempted now, or waits behind its user's queue. */
export function freshDecision(q: KeyQueue | undefined): 'attempt' | 'wait' {
  return q !== undefined && (q.head !== undefined || q.queue.length > 0) ? 'wait' : 'attempt';
}

/** A retry of `messageId`: the user's head (its outcome moves the queue), or a stray copy (attempted, no effect). */
export function retryDecision(q: KeyQueue | undefined, messageId: string): 'head' | 'stray' {
  return q?.head === messageId ? 'head' : 'stray';
}

/**
 * A record read from the waiting topic: its turn (`deliver`, or `dead-letter` behind a dead head
 * with `dead-letter-waiting`), not yet (`cycle`: written again at the tail), or a copy of an event
 * no longer waiting (`drop`: delivered, or left by a crash whose event was handled again).
 */
export function waitingDecision(
  q: KeyQueue | undefined,
  messageId: string,
): 'deliver' | 'dead-letter' | 'cycle' | 'drop' {
  if (q === undefined || !q.queue.includes(messageId)) return 'drop';
  if (q.head !== undefined || q.queue[0] !== messageId) return 'cycle';
  return (q.dead ?? 0) > 0 ? 'dead-letter' : 'deliver';
}

/** The queue after `messageId` was written to the waiting topic (a copy written again after a crash is not added twice). */
export function parked(q: KeyQueue | undefined, messageId: string): KeyQueue {
  const base = q ?? { queue: [] };
  if (base.queue.includes(messageId)) return base;
  return { ...base, queue: [...base.queue, messageId] };
}

/** The queue after the waiting event at its front left it (delivered, dead-lettered, or now the head). */
function shifted(q: KeyQueue, messageId: string): KeyQueue {
  if (q.queue[0] !== messageId) return q;
  const next: KeyQueue = { ...q, queue: q.queue.slice(1) };
  if (next.dead !== undefined) next.dead = Math.max(0, next.dead - 1) || undefined;
  if (next.dead === undefined) {
    delete next.dead;
    delete next.deadHead;
  }
  return next;
}

/**
 * The queue after an attempt step of `messageId` — the user's head, an event taken from the
 * waiting topic, or a fresh event — ended with `outcome`. A retrying event becomes the head; a head
 * delivered or dead-lettered releases the queue (a dead one takes the waiting events with it under
 * `dead-letter-waiting`). Parked by a pause: nothing changes (it comes back through the same step).
 */
export function afterStep(
  q: KeyQueue | undefined,
  messageId: string,
  outcome: StepOutcome,
  onDeadLetter: OnDeadLetter,
  fromWaiting = false,
): KeyQueue {
  let next: KeyQueue = q ?? { queue: [] };
  if (fromWaiting) next = shifted(next, messageId);
  if (outcome === 'parked') return next;
  const wasHead = next.head === messageId;
  if (outcome === 'retrying') return { ...next, head: messageId };
  if (!wasHead) return next;
  const { head: _released, ...rest } = next;
  if (outcome === 'dead' && onDeadLetter === 'dead-letter-waiting' && rest.queue.length > 0)
    return { ...rest, dead: rest.queue.length, deadHead: messageId };
  return rest;
}

/** A dead-lettered waiting event counts as dead for the queue (`dead-letter-waiting`). */
export function afterDeadLettered(q: KeyQueue, messageId: string): KeyQueue {
  return shifted(q, messageId);
}

/** Nothing held and nothing waiting: the user's state can be deleted. */
export function isEmpty(q: KeyQueue | undefined): boolean {
  return q === undefined || (q.head === undefined && q.queue.length === 0);
}
