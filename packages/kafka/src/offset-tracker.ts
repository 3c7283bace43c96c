/**
 * Tracks the records of one partition that are being handled concurrently, so that the committed
 * offset never passes an unfinished record (kafkajs's `resolveOffset` would, if called out of
 * order). Offsets are plain numbers: safe below 2^53.
 */
export class OffsetTracker {
  /** offset → number of handlers running for it (a rebalance can re-deliver one in flight). */
  #inFlight = new Map<number, number>();
  /** Unfinished offsets whose handler gave its slot back (`detach`): they hold the commit, not a slot. */
  #detached = new Set<number>();
  #highestStarted = -1;
  #lastCommitted = -1;

  begin(offset: number): void {
    this.#inFlight.set(offset, (this.#inFlight.get(offset) ?? 0) + 1);
    if (offset > this.#highestStarted) this.#highestStarted = offset;
  }

  finish(offset: number): void {
    const n = this.#inFlight.get(offset);
    if (n === undefined) return;
    if (n <= 1) {
      this.#inFlight.delete(offset);
      this.#detached.delete(offset);
    } else this.#inFlight.set(offset, n - 1);
  }

  /** An unfinished record no longer takes a slot (its handler waits on something else); still not committed past. */
  detach(offset: number): void {
    if (this.#inFlight.has(offset)) this.#detached.add(offset);
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Unfinished records that take a slot (not detached). */
  get holding(): number {
    return this.#inFlight.size - this.#detached.size;
  }

  /** The highest offset handed to a handler so far (-1: none). */
  get highestStarted(): number {
    return this.#highestStarted;
  }

  /** The offset to commit (the next record to read after a restart), or undefined if none started. */
  committable(): number | undefined {
    if (this.#highestStarted < 0) return undefined;
    let lowest = this.#highestStarted + 1;
    for (const offset of this.#inFlight.keys()) if (offset < lowest) lowest = offset;
    return lowest;
  }

  /** The committable offset if it is past the last one Kafka confirmed, else undefined. */
  uncommitted(): number | undefined {
    const next = this.committable();
    return next === undefined || next <= this.#lastCommitted ? undefined : next;
  }

  /**
   * Kafka confirmed a commit of `offset`. Only then does the position count as committed: a commit
   * that failed (broker away, group rebalancing) is offered again by `uncommitted()`, even when
   * the partition has no new record to finish.
   */
  committed(offset: number): void {
    if (offset > this.#lastCommitted) this.#lastCommitted = offset;
  }
}
