import { RETRY_HEADERS } from '@sluice/envelope';
import type { TopicWatcher } from '@sluice/testkit';
import type { Ledger } from './ledger.ts';

/** Per destination, when each event first got a 2xx there: read from the ledger's arrivals as they come. */
export class Receipts {
  readonly #at: Map<string, Map<string, number>>;
  #read = 0;
  readonly #ledger: Ledger;
  constructor(ledger: Ledger, destinations: readonly string[]) {
    this.#ledger = ledger;
    this.#at = new Map(destinations.map((d) => [d, new Map()]));
  }

  at(destination: string, messageId: string): number | undefined {
    const arrivals = this.#ledger.arrivals;
    for (; this.#read < arrivals.length; this.#read++) {
      const a = arrivals[this.#read]!;
      const seen = this.#at.get(a.destination);
      if (seen && a.status >= 200 && a.status < 300 && !seen.has(a.messageId)) seen.set(a.messageId, a.at);
    }
    return this.#at.get(destination)!.get(messageId);
  }
}

/** The dead-letter topic as read so far: per destination, the ids dead-lettered there and why. */
export class DeadLetters {
  readonly #watcher: TopicWatcher;
  readonly #topic: string;
  readonly #ledger: Ledger;
  readonly #destinations: readonly string[];
  constructor(options: { watcher: TopicWatcher; topic: string; ledger: Ledger; destinations: readonly string[] }) {
    this.#watcher = options.watcher;
    this.#topic = options.topic;
    this.#ledger = options.ledger;
    this.#destinations = options.destinations;
  }

  /** Per destination, messageId → last error; also marks them dead-lettered in the ledger. */
  read(): Map<string, Map<string, string>> {
    const byDestination = new Map<string, Map<string, string>>(this.#destinations.map((d) => [d, new Map()]));
    for (const r of this.#watcher.records(this.#topic)) {
      const id = r.headers[RETRY_HEADERS.messageId] ?? '';
      const destination = r.headers[RETRY_HEADERS.destinationId] ?? '';
      byDestination.get(destination)?.set(id, r.headers[RETRY_HEADERS.lastError] ?? '');
      this.#ledger.deadLettered.add(id);
    }
    return byDestination;
  }
}
