// Long drill: a hostile user beside ordered delivery (docs/operations.md, "How ordering is tested")
// — three ordered destinations and an unordered one on one source, 3 partitions; 200 other users ×
// 10 rounds alone (their baseline p99), then again while one user, its head answered 503 by the
// three ordered endpoints, sends 5,000 events with 128-character message ids full of `"` and `\`.
// The others keep flowing within 2 × their p99, the hostile user's `sluice.ordering` records stay
// small and the deliverer's memory bounded; released, its events go out in order, none lost.
// `DRILL_HOSTILE_EVENTS` changes the hostile user's events.
import { after, it } from 'node:test';
import { closeHostileOrderingDrill, hostileOrderingDrill } from '../support/hostile-ordering-drill.ts';

const HOSTILE_EVENTS = Number(process.env.DRILL_HOSTILE_EVENTS ?? 5_000);

after(closeHostileOrderingDrill);

it(`a held user sending ${HOSTILE_EVENTS} events: the others keep their p99 everywhere, its state records stay small, then its events go out in order, none lost`, (t) =>
  hostileOrderingDrill(t, {
    name: 'hostile-long',
    hostileEvents: HOSTILE_EVENTS,
    users: 200,
    rounds: 10,
    roundMs: 1_000,
    partitions: 3,
  }));
