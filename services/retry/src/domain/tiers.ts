/**
 * Delay tiers (docs/reference/retries.md). Tiers are spans in ms, sorted ascending; the shortest tier is the final
 * approach, the others are plain delay queues.
 *
 * A record rides the longest tier T (other than the shortest) with T ≤ remaining wait − allowance,
 * and waits exactly T there. Every record of such a tier waits the same span, so arrival order is
 * eligibility order and a paused head never holds back a record that is due earlier. The
 * allowance keeps a hop's own time (resume, fetch, produce) from eating the last bit of a wait:
 * a record always reaches its final tier with at least `allowanceMs` to spare.
 *
 * When no such tier fits, the record rides the shortest tier, which holds each record on its own
 * timer until due (at most `finalHoldMs` per pass): there, waits differ, so FIFO pausing would make
 * records late.
 */
export function chooseTier(tiersMs: readonly number[], remainingMs: number, allowanceMs: number): number {
  let chosen = tiersMs[0]!;
  for (const tier of tiersMs.slice(1)) if (tier <= remainingMs - allowanceMs) chosen = tier;
  return chosen;
}

/** The longest a record stays in the shortest tier per pass: the next tier's span plus the allowance. */
export function finalHoldMs(tiersMs: readonly number[], allowanceMs: number): number {
  return (tiersMs[1] ?? tiersMs[0]!) + allowanceMs;
}

/**
 * How long a delay tier's consumer lets the broker hold a fetch that finds nothing (kafkajs
 * `maxWaitTimeInMs`). kafkajs fetches a partition resumed when its head falls due only after the
 * fetch in flight returns, so this is the most the resume adds to a hop through the tier; it must
 * stay well inside the hop allowance. 1/80 of the tier's span, 50 ms to 250 ms: tiers of a few
 * seconds keep 50–100 ms, the default tiers (30 s to 60 min) wait 250 ms — half the allowance,
 * and a fifth of the idle fetches 50 ms would make.
 */
export function tierFetchWaitMs(tierMs: number): number {
  return Math.min(250, Math.max(50, Math.round(tierMs / 80)));
}

/** When a record that entered a tier at `enteredAt`, to stay at most `holdMs`, may leave it. */
export function eligibleAt(enteredAt: number, holdMs: number, dueAt: number): number {
  return Math.min(dueAt, enteredAt + holdMs);
}

/** What to do with a record that has left its tier (or just arrived): forward it, or re-tier it. */
export type Placement = { kind: 'forward' } | { kind: 'tier'; tierMs: number };

/** Never early: forward only when `now >= dueAt`. */
export function place(tiersMs: readonly number[], dueAt: number, now: number, allowanceMs: number): Placement {
  const remaining = dueAt - now;
  if (remaining <= 0) return { kind: 'forward' };
  return { kind: 'tier', tierMs: chooseTier(tiersMs, remaining, allowanceMs) };
}

/** Tiers sorted ascending, duplicates removed. */
export function normaliseTiers(tiersMs: readonly number[]): number[] {
  return [...new Set(tiersMs)].sort((a, b) => a - b);
}
