import { fromListFormat, isIdle, readQueueState, type QueueState } from './queue-rules.ts';

/**
 * Bytes one held queue is counted for beside its record's key and value: the map entry and the
 * state object (`delivery.orderingStateBytes` counts these).
 */
export const QUEUE_ENTRY_OVERHEAD_BYTES = 160;

/** Format version of a `sluice.ordering` record's value (a record of the list format has none). */
const FORMAT = 2;

/** The key of a queue's state record: the destination id (no `/` in it) and the user key. */
export function stateKey(destinationId: string, userKey: string): string {
  return `${destinationId}/${userKey}`;
}

/** A queue's state record value (`null`: deleted). */
export function encodeQueueState(q: QueueState | undefined): string | null {
  return isIdle(q) && q?.deadUntil === undefined && q?.legacyDead === undefined
    ? null
    : JSON.stringify({ v: FORMAT, ...q });
}

/** What one record of `sluice.ordering` says. */
export type StateRecord =
  | { kind: 'queue'; destinationId: string; userKey: string; state: QueueState | undefined }
  /** A record of the list format, keyed by the user alone: its queues per destination (empty: deleted). */
  | { kind: 'list-format'; userKey: string; queues: Map<string, QueueState> }
  | { kind: 'malformed'; reason: string };

/**
 * Reads one record. Keys of the list format (`<sourceId>:<userId>`) have a `:` before any `/`;
 * numbered keys start with a destination id, which has neither.
 */
export function decodeStateRecord(key: string, value: Buffer | null): StateRecord {
  const slash = key.indexOf('/');
  const colon = key.indexOf(':');
  const numbered = slash > 0 && (colon < 0 || slash < colon);
  const empty = value === null || value.length === 0;
  if (numbered) {
    const destinationId = key.slice(0, slash);
    const userKey = key.slice(slash + 1);
    if (empty) return { kind: 'queue', destinationId, userKey, state: undefined };
    const parsed = parseJson(value);
    if (typeof parsed !== 'object' || parsed === null || (parsed as { v?: unknown }).v !== FORMAT)
      return { kind: 'malformed', reason: 'not a numbered queue state' };
    const state = readQueueState(parsed);
    if (!state) return { kind: 'malformed', reason: 'a field of the queue state is not what it must be' };
    return { kind: 'queue', destinationId, userKey, state };
  }
  const queues = new Map<string, QueueState>();
  if (empty) return { kind: 'list-format', userKey: key, queues };
  const parsed = parseJson(value);
  if (typeof parsed !== 'object' || parsed === null) return { kind: 'malformed', reason: 'not a JSON object' };
  for (const [destinationId, q] of Object.entries(parsed)) {
    const state = fromListFormat(q);
    if (state && !isIdle(state)) queues.set(destinationId, state);
  }
  return { kind: 'list-format', userKey: key, queues };
}

function parseJson(value: Buffer): unknown {
  try {
    return JSON.parse(value.toString('utf8'));
  } catch {
    return undefined;
  }
}

interface Entry {
  state: QueueState;
  bytes: number;
}

/**
 * The queues held in memory, with the bytes they take against a budget: every queue read from
 * `sluice.ordering` counts (all partitions), and a queue is not started while the budget is spent
 * (`admitsNew`). Queues read from a record of the list format are remembered until each was
 * written again in the numbered format, so the list-format record can then be deleted.
 */
export class QueueStates {
  readonly #entries = new Map<string, Entry>();
  readonly #fromList = new Map<string, Set<string>>();
  #bytes = 0;
  readonly #budget: number;
  constructor(budgetBytes: number) {
    this.#budget = budgetBytes;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Whether a new queue may start: the bytes held are below the budget. */
  admitsNew(): boolean {
    return this.#bytes < this.#budget;
  }

  get(destinationId: string, userKey: string): QueueState | undefined {
    return this.#entries.get(stateKey(destinationId, userKey))?.state;
  }

  /**
   * Sets a queue (undefined or idle: deleted); returns its record's value, and when it was the
   * last queue of a list-format record to be written again, that record's key (to delete).
   */
  set(
    destinationId: string,
    userKey: string,
    state: QueueState | undefined,
  ): { value: string | null; listKeyDone?: string } {
    const key = stateKey(destinationId, userKey);
    const value = encodeQueueState(state);
    const old = this.#entries.get(key);
    if (old) this.#bytes -= old.bytes;
    if (value === null) this.#entries.delete(key);
    else {
      const bytes = Buffer.byteLength(key) + Buffer.byteLength(value) + QUEUE_ENTRY_OVERHEAD_BYTES;
      this.#entries.set(key, { state: state!, bytes });
      this.#bytes += bytes;
    }
    const listed = this.#fromList.get(userKey);
    if (listed?.delete(destinationId) && listed.size === 0) {
      this.#fromList.delete(userKey);
      return { value, listKeyDone: userKey };
    }
    return { value };
  }

  /** Applies a record read from `sluice.ordering` (another process's write, or one from before this start). */
  apply(record: StateRecord): void {
    if (record.kind === 'malformed') return;
    if (record.kind === 'queue') {
      this.set(record.destinationId, record.userKey, record.state);
      return;
    }
    // A list-format record (or its deletion): its queues replace those still read from an earlier one.
    for (const destinationId of [...(this.#fromList.get(record.userKey) ?? [])])
      this.set(destinationId, record.userKey, undefined);
    this.#fromList.delete(record.userKey);
    if (record.queues.size === 0) return;
    for (const [destinationId, state] of record.queues) this.set(destinationId, record.userKey, state);
    this.#fromList.set(record.userKey, new Set(record.queues.keys()));
  }
}
