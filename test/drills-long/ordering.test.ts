// Long drill: ordered delivery per user (docs/operations.md, "How ordering is tested") — 1,000 users × 20 events
// (an identify, then tracks with their sequence number) through ingest's HTTP API to a destination
// with `ordering: per-user` and an unordered one beside it; both receivers fail a seeded 10 % of
// requests and answer 503 to one user's events for their first 30 s. Then again with kill -9 of the
// deliverer and of the retry service mid-run. Order per user, the ledger, and (without the kills)
// p99 of the users not stuck ≤ 2 × the unordered destination's.
import { after, it } from 'node:test';
import { sleep } from '@sluice/testkit';
import { closeOrderingDrill, orderingDrill } from '../support/ordering-drill.ts';

const USERS = Number(process.env.DRILL_USERS ?? 1_000);
const EVENTS = Number(process.env.DRILL_EVENTS_PER_USER ?? 20);
const STUCK_MS = 30_000;
const ROUND_MS = 1_000;

after(closeOrderingDrill);

it(`${USERS} users × ${EVENTS} events, 10 % failures and one user stuck 30 s: in acceptance order per user, none lost, p99 of the others ≤ 2 × unordered`, async (t) => {
  await orderingDrill(t, {
    name: 'ordering',
    users: USERS,
    events: EVENTS,
    stuckMs: STUCK_MS,
    roundMs: ROUND_MS,
    checkLatency: true,
  });
  await closeOrderingDrill();
});

it(`the same with kill -9 of the deliverer and of the retry service mid-run: order and ledger hold`, (t) =>
  orderingDrill(t, {
    name: 'ordering-kill9',
    users: USERS,
    events: EVENTS,
    stuckMs: STUCK_MS,
    roundMs: ROUND_MS,
    checkLatency: false,
    slackMs: 35_000,
    disrupt: async (p, t) => {
      for (const [name, at] of [
        ['deliverer', 5_000],
        ['retry', 4_000],
        ['deliverer', 4_000],
        ['retry', 4_000],
      ] as const) {
        await sleep(at);
        const svc = p.service(name);
        const from = Date.now();
        await svc.kill9();
        t.diagnostic(`kill -9 ${name} after ${p.ledger.arrivals.length} arrivals`);
        await sleep(500);
        await svc.start();
        p.ledger.disruption(`kill -9 ${name}`, from, Date.now());
      }
    },
  }));
