import type { BatchSettings } from '@sluice/config';
import { batchBaseBytes } from '@sluice/webhook';

/** A batch that left: its items in arrival order and the exact bytes of its body. */
export interface ComposedBatch<T> {
  key: string;
  items: T[];
  bytes: number;
}

/** One item for `BatchComposer.add`: the batch key it joins and its size. */
export interface BatchEntry<T> {
  key: string;
  item: T;
  /** Its `batchItemBytes`. */
  bytes: number;
}

interface OpenBatch<T> extends ComposedBatch<T> {
  /** When it must leave at the latest: `maxWaitMs` after its first item. */
  dueAt: number;
}

/**
 * Gathers items into batches per key (a destination and the endpoint set its jobs name), pure: the
 * clock is passed in (docs/reference/batches.md, "Limits"). A batch leaves when it holds
 * `maxEvents`, when one more item would take its body past `maxBytes` (the item then opens the next
 * batch), or `maxWaitMs` after its first item (`due`). An item whose body is over `maxBytes` alone
 * leaves at once as a batch of one. Sizes are exact: `batchBaseBytes` for the document with a
 * batch id of `idBytes` bytes, plus each item's `batchItemBytes` (less the two commas the first
 * item does not write).
 */
export class BatchComposer<T> {
  readonly #open = new Map<string, OpenBatch<T>>();
  readonly #emptyBytes: number;

  constructor(idBytes: number) {
    this.#emptyBytes = batchBaseBytes(idBytes) - 2;
  }

  /** Adds an item to its key's batch; returns the batches that leave because of it, oldest first. */
  add(entry: BatchEntry<T>, limits: BatchSettings, now: number): ComposedBatch<T>[] {
    const { key, item, bytes: itemBytes } = entry;
    const left: ComposedBatch<T>[] = [];
    let open = this.#open.get(key);
    if (open !== undefined && open.bytes + itemBytes > limits.maxBytes) {
      left.push(this.#close(open));
      open = undefined;
    }
    if (open === undefined) {
      open = { key, items: [], bytes: this.#emptyBytes, dueAt: now + limits.maxWaitMs };
      this.#open.set(key, open);
    }
    open.items.push(item);
    open.bytes += itemBytes;
    // Full by count, or by size (an item over the limit alone, or no room for even the smallest item).
    if (open.items.length >= limits.maxEvents || open.bytes >= limits.maxBytes) left.push(this.#close(open));
    return left;
  }

  /** The batches whose wait is over at `now`. */
  due(now: number): ComposedBatch<T>[] {
    const left: ComposedBatch<T>[] = [];
    for (const open of this.#open.values()) if (open.dueAt <= now) left.push(this.#close(open));
    return left;
  }

  /** When the next open batch is due; undefined when none is open. */
  nextDueAt(): number | undefined {
    let next: number | undefined;
    for (const open of this.#open.values()) if (next === undefined || open.dueAt < next) next = open.dueAt;
    return next;
  }

  /** Every open batch, at once (shutdown). */
  drain(): ComposedBatch<T>[] {
    return [...this.#open.values()].map((open) => this.#close(open));
  }

  #close(open: OpenBatch<T>): ComposedBatch<T> {
    this.#open.delete(open.key);
    return { key: open.key, items: open.items, bytes: open.bytes };
  }
}
