/**
 * Counts by key (a replay plan's counts by destination and by reason). A destination id may be any
 * `[A-Za-z0-9._-]` string, `constructor`, `toString` or `__proto__` among them: the counts live in
 * an object without a prototype, so such a key is counted like any other and serialises as itself.
 */
export type Tally = Record<string, number>;

export function emptyTally(): Tally {
  return Object.create(null) as Tally;
}

export function countIn(tally: Tally, key: string): void {
  tally[key] = (Object.hasOwn(tally, key) ? tally[key]! : 0) + 1;
}
