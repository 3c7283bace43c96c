import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attemptError, type DeliveryRow, foldDeliveries } from '../src/domain/fold.ts';
import { messageKey } from '../src/domain/keys.ts';
import { attemptEntry, deadEntry, eventEntry } from './helpers.ts';

const row = (over: Partial<DeliveryRow> = {}): DeliveryRow => ({
  sourceId: 'src',
  messageId: 'm1',
  destinationId: 'hooks',
  state: 'retrying',
  stateAt: 2_000,
  receivedAt: 1_000,
  attempts: 1,
  lastError: 'http_503',
  deadReason: null,
  windowFrom: 1_000,
  ...over,
});
const received = (at = 1_000) => new Map([[messageKey({ sourceId: 'src', messageId: 'm1' }), at]]);

describe('delivery-log fold of facts into delivery states (no database)', () => {
  it('a routed event opens a delivering row per destination', () => {
    const writes = foldDeliveries({
      current: [],
      events: [eventEntry({ destinationIds: ['a', 'b'] })],
      attempts: [],
      deaths: [],
      receivedAt: received(),
    });
    assert.deepEqual(
      writes.map((w) => [w.destinationId, w.state, w.stateAt, w.attempts]),
      [
        ['a', 'delivering', 1_000, 0],
        ['b', 'delivering', 1_000, 0],
      ],
    );
  });

  it('attempts apply in time order whatever order they come in; the count and last error follow', () => {
    const [w] = foldDeliveries({
      current: [],
      events: [],
      attempts: [
        attemptEntry({ attempt: 3, at: 4_000, outcome: 'success', status: 200, error: undefined }),
        attemptEntry({ attempt: 1, at: 2_000 }),
        attemptEntry({ attempt: 2, at: 3_000, error: 'timeout' }),
      ],
      deaths: [],
      receivedAt: received(),
    });
    assert.equal(w!.state, 'delivered');
    assert.equal(w!.stateAt, 4_000);
    assert.equal(w!.attempts, 3);
    assert.equal(w!.lastError, 'timeout');
    assert.equal(w!.receivedAt, 1_000, 'the receive time of the message, for a row made from attempts');
  });

  it('from the stored row: a death wins over a failure, keeps its reason, and an older failure leaves it dead', () => {
    const [dead] = foldDeliveries({
      current: [row()],
      events: [],
      attempts: [attemptEntry({ at: 1_900 })],
      deaths: [deadEntry({ at: 3_000, reason: 'retries_exhausted', lastError: 'http_500' })],
      receivedAt: received(),
    });
    assert.equal(dead!.state, 'dead');
    assert.equal(dead!.deadReason, 'retries_exhausted');
    assert.equal(dead!.lastError, 'http_500');
    assert.equal(dead!.attempts, 2);
  });

  it('a delivered row stays delivered; an event read late gives its receive time to the rows made before it', () => {
    const writes = foldDeliveries({
      current: [row({ state: 'delivered', stateAt: 5_000, receivedAt: 2_000 })],
      events: [eventEntry({ receivedAt: 900 })],
      attempts: [attemptEntry({ at: 6_000 })],
      deaths: [],
      receivedAt: received(900),
    });
    assert.equal(writes.length, 1);
    assert.equal(writes[0]!.state, 'delivered');
    assert.equal(writes[0]!.receivedAt, 900);
  });

  it('the retry window runs from the receive time, then from the first attempt of a run, whatever the order read', () => {
    const fold = (attempts: ReturnType<typeof attemptEntry>[], deaths: ReturnType<typeof deadEntry>[] = []) =>
      foldDeliveries({ current: [], events: [eventEntry()], attempts, deaths, receivedAt: received() })[0]!;
    assert.equal(fold([]).windowFrom, 1_000, 'nothing attempted: from the receive time');
    const run = [attemptEntry({ at: 2_000 }), attemptEntry({ attempt: 2, at: 3_000 })];
    assert.equal(fold(run).windowFrom, 2_000);
    assert.equal(fold([...run].reverse()).windowFrom, 2_000, 'an earlier attempt read late moves it back');
    // A replay after the death starts a new run, with a window of its own.
    const replayed = fold([...run, attemptEntry({ attempt: 1, at: 9_000 })], [deadEntry({ at: 4_000 })]);
    assert.deepEqual([replayed.state, replayed.windowFrom], ['retrying', 9_000]);
  });

  it('nothing new, nothing written', () => {
    assert.deepEqual(
      foldDeliveries({ current: [row()], events: [], attempts: [], deaths: [], receivedAt: received() }),
      [],
    );
  });

  it("an attempt's error: none for a success, the error, else the status, else 'failed'", () => {
    assert.equal(attemptError({ outcome: 'success', error: 'x' }), null);
    assert.equal(attemptError({ outcome: 'retryable', error: 'timeout', status: 503 }), 'timeout');
    assert.equal(attemptError({ outcome: 'permanent', status: 404 }), 'http_404');
    assert.equal(attemptError({ outcome: 'retryable' }), 'failed');
  });

  it('a filtered record: the state is filtered, no attempt counted; it never moves back an attempted delivery', () => {
    const filtered = [{ sourceId: 'src', messageId: 'm1', destinationId: 'hooks', at: 1_500 }];
    const [w] = foldDeliveries({
      current: [],
      events: [eventEntry({ destinationIds: ['hooks'] })],
      attempts: [],
      deaths: [],
      filtered,
      receivedAt: received(),
    });
    assert.deepEqual([w!.state, w!.stateAt, w!.attempts, w!.lastError], ['filtered', 1_500, 0, null]);
    const [again] = foldDeliveries({
      current: [w!],
      events: [],
      attempts: [],
      deaths: [],
      filtered,
      receivedAt: received(),
    });
    assert.deepEqual([again!.state, again!.stateAt], ['filtered', 1_500]);
    const [retrying] = foldDeliveries({
      current: [row()],
      events: [],
      attempts: [],
      deaths: [],
      filtered,
      receivedAt: received(),
    });
    assert.deepEqual([retrying!.state, retrying!.attempts], ['retrying', 1], 'read again under a changed filter');
    const [attempted] = foldDeliveries({
      current: [w!],
      events: [],
      attempts: [attemptEntry({ at: 3_000, outcome: 'success', status: 200, error: undefined })],
      deaths: [],
      receivedAt: received(),
    });
    assert.deepEqual([attempted!.state, attempted!.attempts], ['delivered', 1], 'an attempt after all moves it on');
  });
});
