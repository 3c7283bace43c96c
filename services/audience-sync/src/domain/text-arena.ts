/**
 * Strings packed end to end in one growable `Uint16Array` (UTF-16 code units), addressed by
 * (start, length). A million user ids cost their characters and nothing per object, which is what
 * keeps a large audience's state index compact (docs/reference/audiences.md, "memory stays bounded").
 */
export class TextArena {
  #units: Uint16Array;
  #used = 0;

  constructor(initialUnits = 1024) {
    this.#units = new Uint16Array(initialUnits);
  }

  get usedUnits(): number {
    return this.#used;
  }

  get bytes(): number {
    return this.#units.byteLength;
  }

  /** Appends `text`; returns its start. */
  append(text: string): number {
    const start = this.#used;
    const end = start + text.length;
    if (end > this.#units.length) this.#grow(end);
    const units = this.#units;
    for (let i = 0; i < text.length; i++) units[start + i] = text.charCodeAt(i);
    this.#used = end;
    return start;
  }

  equals(start: number, length: number, text: string): boolean {
    if (length !== text.length) return false;
    const units = this.#units;
    for (let i = 0; i < length; i++) if (units[start + i] !== text.charCodeAt(i)) return false;
    return true;
  }

  read(start: number, length: number): string {
    const units = this.#units;
    if (length <= 4096)
      return String.fromCharCode.apply(null, units.subarray(start, start + length) as unknown as number[]);
    let out = '';
    for (let at = start; at < start + length; at += 4096) {
      out += String.fromCharCode.apply(
        null,
        units.subarray(at, Math.min(at + 4096, start + length)) as unknown as number[],
      );
    }
    return out;
  }

  clear(): void {
    this.#used = 0;
  }

  #grow(min: number): void {
    const next = new Uint16Array(Math.max(min, Math.ceil(this.#units.length * 1.5)));
    next.set(this.#units.subarray(0, this.#used));
    this.#units = next;
  }
}
