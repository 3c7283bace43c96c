/**
 * Gathers items handed in during one event-loop turn and passes them on as one array in the
 * next (`setImmediate`): both sides of the webhook thread send one message per turn, not per
 * request. `flush()` passes on what is gathered at once (before a message that must follow it).
 */
export class TurnBatch<T> {
  #items: T[] = [];
  #scheduled = false;

  private readonly deliver: (items: T[]) => void;
  constructor(deliver: (items: T[]) => void) {
    this.deliver = deliver;
  }

  push(item: T): void {
    this.#items.push(item);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.#scheduled = false;
    if (this.#items.length === 0) return;
    const items = this.#items;
    this.#items = [];
    this.deliver(items);
  }
}
