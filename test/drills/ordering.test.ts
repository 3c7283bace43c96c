// Drill: ordered delivery per user, the short variant of test/drills-long/ordering.test.ts — 100
// users × 10 events to a destination with `ordering: per-user` and an unordered one beside it,
// receivers failing a seeded 10 % of requests and one user's events for 5 s (the long drill: 30 s).
import { after, it } from 'node:test';
import { closeOrderingDrill, orderingDrill } from '../support/ordering-drill.ts';

after(closeOrderingDrill);

it('100 users × 10 events, 10 % failures and one user stuck 5 s: each user applied in acceptance order, none lost, the others not held back', (t) =>
  orderingDrill(t, { name: 'ordering', users: 100, events: 10, stuckMs: 5_000, roundMs: 200, checkLatency: true }));
