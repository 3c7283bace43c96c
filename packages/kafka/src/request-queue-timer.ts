import { createRequire } from 'node:module';

/**
 * kafkajs 2.2.4's per-connection request queue re-arms a timer after every check of its pending
 * requests, even when nothing is pending and nothing is throttled: the delay is
 * `throttledUntil - Date.now()` with `throttledUntil` at -1, which Node clamps to 1 ms (and, on
 * Node 24, reports as a `TimeoutNegativeWarning`). Every open connection of every client so wakes
 * its process about 1,000 times a second for nothing (kafkajs issue #1751): 10,400 timers and
 * ~0.035 of a core per second for one idle admin, producer and five consumers.
 *
 * `fixRequestQueueTimer` makes the check schedule a timer only when there is something to wait
 * for: a pending request (sent when an in-flight request completes or the throttle ends) or an
 * active throttle. Enqueuing a request that cannot go at once still schedules its check, as
 * before. kafkajs is unmaintained, so the fix is applied here, once per process, by
 * `createKafka`; its test fails if kafkajs's request queue no longer has this shape.
 */

interface RequestQueueShape {
  pending: unknown[];
  throttledUntil: number;
  scheduleCheckPendingRequests(): void;
}

const FIXED = Symbol.for('sluice.kafkajs.requestQueueTimerFixed');

/** kafkajs's RequestQueue class (an internal module: kafkajs has no `exports` map). */
export function requestQueueClass(): { prototype: RequestQueueShape } & (new (options: object) => RequestQueueShape) {
  return createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js');
}

/** Applies the fix to kafkajs's RequestQueue; idempotent. Returns whether the fix is in place. */
export function fixRequestQueueTimer(): boolean {
  const proto = requestQueueClass().prototype as RequestQueueShape & { [FIXED]?: true };
  if (proto[FIXED]) return true;
  const schedule = proto.scheduleCheckPendingRequests;
  if (typeof schedule !== 'function') return false;
  proto.scheduleCheckPendingRequests = function (this: RequestQueueShape) {
    if (this.pending.length === 0 && !(this.throttledUntil > Date.now())) return;
    schedule.call(this);
  };
  proto[FIXED] = true;
  return true;
}
