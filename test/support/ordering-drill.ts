import assert from 'node:assert/strict';
import { loadavg } from 'node:os';
import type { TestContext } from 'node:test';
import { sleep } from '@sluice/testkit';
import { ledgerProperties } from './ledger.ts';
import { checkOrder, formatOrderReport, latencyFigures, type OrderReport } from './order-check.ts';
import { StatefulReceiver } from './order-receiver.ts';
import { Pipeline } from './pipeline.ts';

/** The destination with `ordering: per-user`, and the unordered one beside it (same receiver behaviour). */
export const ORDERED = 'ledger-hooks';
export const UNORDERED = 'ledger-unordered';
/**
 * `DRILL_ORDERING=none` leaves the ordered destination unordered: the drill must then fail on
 * reordered users (the check's negative control).
 */
const ORDERING = process.env.DRILL_ORDERING ?? 'per-user';
const FAIL_RATE = 0.1;
const BATCH = 100;

export interface OrderingDrillOptions {
  name: string;
  users: number;
  /** Per user: an identify, then `events - 1` tracks carrying their sequence number. */
  events: number;
  /** How long the stuck user's events are answered 503, from the first of them to arrive. */
  stuckMs: number;
  /** The rounds' pace: round k (every user's k-th event) is sent k × roundMs after the first, once round k-1 is acknowledged. */
  roundMs: number;
  /** Runs beside the sending (kill -9 of services); disruptions go into the pipeline's ledger. */
  disrupt?: (pipeline: Pipeline, t: TestContext) => Promise<void>;
  /** Duplicates within this long of a disruption are explained (the ledger's slack). */
  slackMs?: number;
  /** Assert the ordered destination's p99 of own waits (users not stuck) ≤ 2 × the unordered one's p99 ack → applied. */
  checkLatency: boolean;
}

let running: Pipeline | undefined;
/** Closes the pipeline the drill started, whether it passed or failed (a drill file's `after`). */
export async function closeOrderingDrill(): Promise<void> {
  await running?.close();
  running = undefined;
}

/**
 * Users × events through ingest's HTTP API to a destination delivering in order per user and an
 * unordered one beside it, both receivers failing a seeded 10 % of requests and one user's events
 * for `stuckMs`; then the ledger (nothing lost, duplicates explained) and, per user, the applied
 * order against ingest's acceptance order. `closeOrderingDrill` ends what it started.
 */
export async function orderingDrill(t: TestContext, o: OrderingDrillOptions): Promise<void> {
  const users = Array.from({ length: o.users }, (_, i) => `user-${i}`);
  const stuckUser = users[1]!;
  const receiverOptions = { failRate: FAIL_RATE, stuckUser, stuckMs: o.stuckMs };
  const orderedReceiver = new StatefulReceiver({ seed: 1, ...receiverOptions });
  const unorderedReceiver = new StatefulReceiver({ seed: 2, ...receiverOptions });
  const pipeline = await Pipeline.start({
    endpoints: [orderedReceiver.behaviour],
    ...(ORDERING !== 'none' && { destination: { ordering: ORDERING } }),
    beside: { id: UNORDERED, endpoint: unorderedReceiver.behaviour },
    partitions: 6,
    // Shrunk retry tiers (the default schedule starts at 30 s): a random failure costs about 1 s.
    config: { retry: { window: '10m', schedule: ['1s', '2s'], tiers: ['1s', '2s'] } },
  });
  running = pipeline;
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  t.diagnostic(`load average at the start: ${load()}`);

  const accepted = new Map<string, string[]>(users.map((u) => [u, []]));
  const ackedAt = new Map<string, number>();
  const t0 = Date.now();
  const sending = (async () => {
    for (let k = 0; k < o.events; k++) {
      const due = t0 + k * o.roundMs;
      if (due > Date.now()) await sleep(due - Date.now());
      const userOf = new Map<string, string>();
      const calls = users.map((userId) => {
        const messageId = pipeline.nextMessageId();
        userOf.set(messageId, userId);
        const payload = ledgerProperties(k);
        return k === 0
          ? { type: 'identify', messageId, userId, traits: { ...payload, plan: 'drill' } }
          : { type: 'track', messageId, userId, event: 'Drill Step', properties: payload };
      });
      const batches = Array.from({ length: Math.ceil(calls.length / BATCH) }, (_, i) =>
        calls.slice(i * BATCH, (i + 1) * BATCH),
      );
      const round = await pipeline.postCalls(batches, { concurrency: 4 });
      for (const id of round.ids) accepted.get(userOf.get(id)!)!.push(id);
      for (const [id, at] of round.ackedAt) ackedAt.set(id, at);
    }
  })();
  await Promise.all([sending, o.disrupt?.(pipeline, t)]);
  const sentMs = Date.now() - t0;
  await pipeline.settle(o.stuckMs + 120_000);
  t.diagnostic(`sent in ${sentMs} ms, settled ${Date.now() - t0} ms after the first send; load ${load()}`);

  const summary = pipeline.report(t, o.name, o.slackMs);
  const lastDisruption = Math.max(t0, ...pipeline.ledger.disruptions.map((d) => d.to));
  const { unexplained } = pipeline.ledger.duplicates(o.slackMs);
  // What the services logged (warnings and errors) says what re-sent them: a rebalance, a restart.
  if (unexplained.length > 0)
    for (const svc of pipeline.services.values()) t.diagnostic(`${svc.name} logged:\n${svc.output.slice(-3_000)}`);
  for (const d of unexplained.slice(0, 10))
    t.diagnostic(
      `unexplained duplicate at ${d.destination}: ${d.messageId} (${d.status}) ${d.at - lastDisruption} ms after the last disruption ended, first 2xx ${d.firstOkAt - lastDisruption} ms after it`,
    );
  const trail = (destination: string, receiver: StatefulReceiver) =>
    checkOrder({
      accepted,
      ackedAt,
      applied: receiver.applied,
      arrivals: pipeline.ledger.arrivals.filter((a) => a.destination === destination),
      deadLettered: pipeline.ledger.deadLettered,
    });
  const ordered = trail(ORDERED, orderedReceiver);
  const unordered = trail(UNORDERED, unorderedReceiver);
  const stuck = new Set([stuckUser]);
  for (const [name, r] of [
    [`${o.name} ordered`, ordered],
    [`${o.name} unordered`, unordered],
  ] as const) {
    t.diagnostic(formatOrderReport(name, r, stuck));
    console.log(formatOrderReport(name, r, stuck));
  }
  const stuckLatency = (r: OrderReport) => Math.max(...(r.latencyByUser.get(stuckUser) ?? []));
  t.diagnostic(
    `stuck user ${stuckUser}: worst ack→applied ordered ${stuckLatency(ordered)} ms, unordered ${stuckLatency(unordered)} ms`,
  );

  assert.equal(summary.acked, o.users * o.events, 'ingest acknowledged every event');
  assert.equal(summary.lost, 0);
  assert.equal(summary.badSignatures, 0);
  assert.equal(summary.badBodies, 0);
  assert.equal(summary.duplicates - summary.duplicatesExplained, 0, 'every duplicate falls in a disruption window');
  assert.deepEqual(ordered.missing, []);
  assert.deepEqual(
    ordered.reordered.slice(0, 5),
    [],
    `${ordered.reordered.length} users' events applied out of acceptance order`,
  );
  assert.equal(ordered.attemptsAhead, 0, 'no event attempted while an earlier one of its user waited');
  assert.equal(ordered.applied, o.users * o.events);
  // The check can fail: beside it, the unordered destination loses order exactly where retries happen.
  assert.ok(unordered.reordered.length > 0, 'the unordered destination applied some users out of order');
  const firstStuckApplied = Math.min(...orderedReceiver.applied.filter((a) => a.user === stuckUser).map((a) => a.at));
  assert.ok(firstStuckApplied >= orderedReceiver.stuckSince! + o.stuckMs, 'the stuck user was held for its window');
  if (o.checkLatency) {
    // At the ordered destination an event also waits for its user's earlier events, retries
    // included: that wait is the order itself, so the ordered side counts each event's own wait
    // (from when it could go), the unordered side ack → applied. Holding back by another user
    // (the stuck one, a slot held) shows in the own wait.
    const p99 = {
      ordered: latencyFigures(ordered, stuck, 'ownWait').p99,
      unordered: latencyFigures(unordered, stuck).p99,
    };
    t.diagnostic(`p99 ordered own wait / unordered (users not stuck): ${(p99.ordered / p99.unordered).toFixed(2)}`);
    assert.ok(
      p99.ordered <= 2 * p99.unordered,
      `p99 own wait ${p99.ordered} ms ordered vs ${p99.unordered} ms unordered (users not stuck)`,
    );
  }
}
