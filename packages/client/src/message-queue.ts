import type { BatchLimits } from './batch-splitter.ts';
import { nextBatchSize } from './batch-splitter.ts';

/** A call waiting to be sent. `seq` numbers calls in the order they were made, from 1. */
export interface QueuedMessage {
  seq: number;
  json: string;
  bytes: number;
}

/** FIFO of queued calls; batches are cut from its front. */
export class MessageQueue {
  #items: QueuedMessage[] = [];
  #head = 0;
  #lastSeq = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  /** `seq` of the latest call ever pushed (0 before the first). */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** `seq` of the oldest waiting call, or `Infinity` when empty. */
  get firstSeq(): number {
    return this.#items[this.#head]?.seq ?? Number.POSITIVE_INFINITY;
  }

  push(json: string, bytes: number): void {
    this.#items.push({ seq: ++this.#lastSeq, json, bytes });
  }

  /** Removes and returns the next batch: as many calls as fit in one request body. */
  takeBatch(overheadBytes: number, limits?: BatchLimits): QueuedMessage[] {
    const count = nextBatchSize(this.#items, overheadBytes, limits, this.#head);
    const batch = this.#items.slice(this.#head, this.#head + count);
    this.#head += count;
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 4096 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return batch;
  }
}
