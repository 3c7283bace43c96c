// Drill: a hostile user beside ordered delivery, the short variant of
// test/drills-long/hostile-ordering.test.ts — three ordered destinations and an unordered one, 200
// other users × 10 rounds alone, then again while one user, its head answered 503 by the ordered
// endpoints, sends 1,500 events with 128-character message ids full of `"` and `\` (the long drill: 5,000).
import { after, it } from 'node:test';
import { closeHostileOrderingDrill, hostileOrderingDrill } from '../support/hostile-ordering-drill.ts';

after(closeHostileOrderingDrill);

it('a held user sending 1,500 events: the others keep their p99 everywhere, its state records stay small, then its events go out in order, none lost', (t) =>
  hostileOrderingDrill(t, {
    name: 'hostile',
    hostileEvents: 1_500,
    users: 200,
    rounds: 10,
    roundMs: 600,
    partitions: 3,
  }));
