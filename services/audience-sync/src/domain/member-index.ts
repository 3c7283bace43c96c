import { TextArena } from './text-arena.ts';

/** Entry flags. */
export const LIVE = 1; // a member of the last completed sync
export const SEEN = 2; // present in the sync in progress
export const PENDING = 4; // joins, or changes value, when the sync in progress completes

const EMPTY = 0;
const MIN_CAPACITY = 1024;

/** 32-bit FNV-1a over UTF-16 code units. */
export function hashText(text: string, seed = 0x811c9dc5): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A second, independent 32-bit hash (murmur-style mixing), so a value is fingerprinted in 64 bits. */
function hashText2(text: string): number {
  let h = 0x9747b28c;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 15;
  }
  return h >>> 0;
}

/**
 * The compact membership of one audience or computed trait: user ids in a `TextArena`, per-entry
 * columns in typed arrays and an open-addressing hash table of entry numbers. No JS object per
 * member, so a million members cost tens of megabytes, not hundreds (docs/audiences.md).
 *
 * With `withValues`, each entry also holds a 64-bit fingerprint of its trait value (enough to tell
 * "changed"), and a pending value (JSON text) while a sync is in progress.
 */
export class MemberIndex {
  readonly withValues: boolean;
  #ids = new TextArena();
  #pendingText = new TextArena(16);
  #start = new Uint32Array(MIN_CAPACITY);
  #length = new Uint16Array(MIN_CAPACITY);
  #flags = new Uint8Array(MIN_CAPACITY);
  #valueA: Uint32Array | undefined;
  #valueB: Uint32Array | undefined;
  #pendingStart: Uint32Array | undefined;
  #pendingLength: Uint32Array | undefined;
  #slots = new Int32Array(MIN_CAPACITY * 2);
  #count = 0;
  #removed = 0;

  constructor(options: { withValues: boolean }) {
    this.withValues = options.withValues;
    if (this.withValues) {
      this.#valueA = new Uint32Array(MIN_CAPACITY);
      this.#valueB = new Uint32Array(MIN_CAPACITY);
      this.#pendingStart = new Uint32Array(MIN_CAPACITY);
      this.#pendingLength = new Uint32Array(MIN_CAPACITY);
    }
  }

  /** Entries ever inserted since the last compaction (iterate `0 … entryCount - 1`). */
  get entryCount(): number {
    return this.#count;
  }

  /** Entries that are not removed (members, plus users pending to join). */
  get size(): number {
    return this.#count - this.#removed;
  }

  /** Bytes held by the typed arrays: what "compact state index" means in the benchmark. */
  get bytes(): number {
    const cols = [
      this.#start,
      this.#length,
      this.#flags,
      this.#valueA,
      this.#valueB,
      this.#pendingStart,
      this.#pendingLength,
      this.#slots,
    ];
    return cols.reduce((sum, a) => sum + (a?.byteLength ?? 0), 0) + this.#ids.bytes + this.#pendingText.bytes;
  }

  /** The entry of `userId` that is not removed, or -1. */
  find(userId: string): number {
    const mask = this.#slots.length - 1;
    for (let slot = hashText(userId) & mask; ; slot = (slot + 1) & mask) {
      const stored = this.#slots[slot]!;
      if (stored === EMPTY) return -1;
      const entry = stored - 1;
      if (this.#flags[entry] !== 0 && this.#ids.equals(this.#start[entry]!, this.#length[entry]!, userId)) return entry;
    }
  }

  /** Adds `userId` (the caller checked `find` first) with `flags`; returns its entry. */
  insert(userId: string, flags: number): number {
    if (this.#count === this.#start.length) this.#growColumns();
    if ((this.#count + 1) * 2 > this.#slots.length) this.#rehash(this.#slots.length * 2);
    const entry = this.#count++;
    this.#start[entry] = this.#ids.append(userId);
    this.#length[entry] = userId.length;
    this.#flags[entry] = flags;
    this.#place(entry, hashText(userId));
    return entry;
  }

  flags(entry: number): number {
    return this.#flags[entry]!;
  }

  setFlags(entry: number, flags: number): void {
    if (flags === 0) this.remove(entry);
    else this.#flags[entry] = flags;
  }

  /** Marks an entry removed; its slot stays as a tombstone until `compact`. */
  remove(entry: number): void {
    if (this.#flags[entry] === 0) return;
    this.#flags[entry] = 0;
    this.#removed++;
  }

  userId(entry: number): string {
    return this.#ids.read(this.#start[entry]!, this.#length[entry]!);
  }

  valueEquals(entry: number, valueJson: string): boolean {
    return this.#valueA![entry] === hashText(valueJson) && this.#valueB![entry] === hashText2(valueJson);
  }

  setValue(entry: number, valueJson: string): void {
    this.#valueA![entry] = hashText(valueJson);
    this.#valueB![entry] = hashText2(valueJson);
  }

  setPendingValue(entry: number, valueJson: string): void {
    this.#pendingStart![entry] = this.#pendingText.append(valueJson);
    this.#pendingLength![entry] = valueJson.length;
  }

  pendingValue(entry: number): string {
    return this.#pendingText.read(this.#pendingStart![entry]!, this.#pendingLength![entry]!);
  }

  /** Forgets every pending value (after a sync completes or is abandoned). */
  clearPendingValues(): void {
    this.#pendingText.clear();
  }

  /** Drops removed entries when they outnumber the live ones, so churn does not grow memory forever. */
  compactIfWasteful(): void {
    if (this.#removed < MIN_CAPACITY || this.#removed < this.size) return;
    const keep: number[] = [];
    for (let e = 0; e < this.#count; e++) if (this.#flags[e] !== 0) keep.push(e);
    const old = {
      ids: this.#ids,
      start: this.#start,
      length: this.#length,
      flags: this.#flags,
      a: this.#valueA,
      b: this.#valueB,
    };
    const capacity = Math.max(MIN_CAPACITY, keep.length * 2);
    this.#ids = new TextArena(
      Math.max(
        1024,
        keep.reduce((n, e) => n + old.length[e]!, 0),
      ),
    );
    this.#start = new Uint32Array(capacity);
    this.#length = new Uint16Array(capacity);
    this.#flags = new Uint8Array(capacity);
    if (this.withValues) {
      this.#valueA = new Uint32Array(capacity);
      this.#valueB = new Uint32Array(capacity);
      this.#pendingStart = new Uint32Array(capacity);
      this.#pendingLength = new Uint32Array(capacity);
    }
    this.#slots = new Int32Array(nextPowerOfTwo(capacity * 2));
    this.#count = 0;
    this.#removed = 0;
    for (const e of keep) {
      const userId = old.ids.read(old.start[e]!, old.length[e]!);
      const entry = this.insert(userId, old.flags[e]!);
      if (this.withValues) {
        this.#valueA![entry] = old.a![e]!;
        this.#valueB![entry] = old.b![e]!;
      }
    }
  }

  #place(entry: number, hash: number): void {
    const mask = this.#slots.length - 1;
    let slot = hash & mask;
    while (this.#slots[slot] !== EMPTY) slot = (slot + 1) & mask;
    this.#slots[slot] = entry + 1;
  }

  #rehash(slotCount: number): void {
    this.#slots = new Int32Array(slotCount);
    for (let e = 0; e < this.#count; e++) this.#place(e, hashText(this.#ids.read(this.#start[e]!, this.#length[e]!)));
  }

  #growColumns(): void {
    const capacity = Math.ceil(this.#start.length * 1.5);
    this.#start = grow(this.#start, capacity);
    this.#length = grow(this.#length, capacity);
    this.#flags = grow(this.#flags, capacity);
    if (this.withValues) {
      this.#valueA = grow(this.#valueA!, capacity);
      this.#valueB = grow(this.#valueB!, capacity);
      this.#pendingStart = grow(this.#pendingStart!, capacity);
      this.#pendingLength = grow(this.#pendingLength!, capacity);
    }
  }
}

function grow<T extends Uint8Array | Uint16Array | Uint32Array>(array: T, capacity: number): T {
  const next = new (array.constructor as new (n: number) => T)(capacity);
  next.set(array);
  return next;
}

function nextPowerOfTwo(n: number): number {
  let p = MIN_CAPACITY;
  while (p < n) p *= 2;
  return p;
}
