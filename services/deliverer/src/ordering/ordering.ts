import type { Destination, SluiceConfig } from '@sluice/config';
import { headersText, type OrderingRelease } from '@sluice/envelope';
import { type ConsumedRecord, ownedRecord, type RecordSink, type RecordSlot } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import {
  ORDERING_HEADER,
  ORDERING_HELD_BYTES,
  ORDERING_MAX_WAITING,
  ORDERING_MAX_WAITING_BYTES,
  ORDERING_USER_SHARE_OF_HELD,
} from '../service/constants.ts';
import type { DeliveryJob } from '../intake/delivery-job.ts';
import { unparkJob } from '../parking/parked-job.ts';
import type { DelivererMetrics } from '../service/metrics.ts';
import { liveDestinationOrDeadLetter, type LiveDestinationContext } from '../intake/live-destination.ts';
import type { Turn } from '../intake/turn.ts';
import type { AttemptStep } from '../attempt/attempt-step.ts';
import type { DeadLetter } from '../attempt/settle.ts';
import { Flights } from './flights.ts';
import { HeldEvents } from './held-events.ts';
import type { OrderingStore } from './ordering-store.ts';
import { ParkWrites } from './park-writes.ts';
import { PartitionProgress } from './partition-progress.ts';
import { chainId, isMoving, onDeadLetterOf, type Flight, type QueueAt } from './queue-at.ts';
import { moveQueue, type QueueMovesDeps } from './queue-moves.ts';
import {
  afterDeadLettered,
  afterStep,
  freshDecision,
  isIdle,
  retryDecision,
  unwrittenPlace,
  waitingCount,
  waitingDecision,
  type WaitingPlace,
} from './queue-rules.ts';
import { TurnWaits, type AwaitedTurn } from './turn-waits.ts';
import { UnorderedEvents } from './unordered-events.ts';
import { UserChains } from './user-chains.ts';
import { orderingHeader, orderingHeaderOf } from './waiting-header.ts';
import type { WaitingTopics } from './waiting-topics.ts';

/** Counts of what waits in the ordering now, by kind (`Ordering.waits`). */
export interface OrderingWaits {
  flights: number;
  held: number;
  turnInSlot: number;
  turnInMemory: number;
  idle: number;
  /** Steps waiting for an earlier step of their user's chain to end. */
  chained: number;
}

/** A turn read from a partition: a live, parked or retried job of an ordered destination. */
export type OrderedTurn = Turn & { partition: number };

/**
 * Where an event the intake decision dead-lettered stood: its partition, and for a waiting record
 * its place in its user's queue and the turn it waited for, if any.
 */
interface LeftAt {
  partition: number;
  place?: WaitingPlace;
  turn?: AwaitedTurn;
}

export interface OrderingDeps {
  /** The config in force: whether a destination is ordered is read from it at each step. */
  config: () => SluiceConfig;
  /** The waiting topics: a destination's is created at the first park of one of its users. */
  waitingTopics: Pick<WaitingTopics, 'ensure'>;
  sink: RecordSink;
  store: Pick<OrderingStore, 'ready' | 'get' | 'put' | 'admitsNew'>;
  /**
   * Dead-letters a waiting event: `permanent_failure` behind a dead head (`dead-letter-waiting`) or
   * when its user's full queue refuses it; `destination_deleted` when its destination is gone,
   * `no_endpoints` when it is disabled (the intake decision, `liveDestinationOrDeadLetter`).
   */
  deadLetter: (job: DeliveryJob, dead: DeadLetter) => Promise<void>;
  metrics: DelivererMetrics;
  logger: Logger;
  now: () => number;
  /** The most events of one user waiting for one destination; default `ORDERING_MAX_WAITING`. A later one is dead-lettered. */
  maxWaiting?: number;
  /** The most body bytes of one user waiting for one destination; default `ORDERING_MAX_WAITING_BYTES`. */
  maxWaitingBytes?: number;
  /** How long a waiting record that went round once with no progress waits for one; default 30 s. */
  idleWaitMs?: number;
  /** The most events of one user waiting in memory behind its attempt in flight, per destination; default `ORDERING_HELD_EVENTS`. */
  maxHeld?: number;
  /** The most body bytes waiting in memory behind attempts in flight, all users; default `ORDERING_HELD_BYTES`. */
  maxHeldBytes?: number;
}

/**
 * Why the handler of a waiting record stopped: done with it, to wait for the progress after
 * `round`, to deliver it, or to wait for its user's queue to move (`turn`: resolves false after
 * `idleWaitMs` or at shutdown; `inMemory`: its handler slot is given back meanwhile).
 */
type WaitingStep =
  | { step: 'done' }
  | { step: 'deliver' }
  | { step: 'idle'; round: string }
  | { step: 'turn'; turn: AwaitedTurn };

/**
 * Per-user order for the destinations that ask for it (docs/reference/ordering.md). The steps that
 * read and write a user's queue run one after the other (a chain per destination and user, in
 * memory only while a step runs); an attempt runs outside that chain. A user's next event never
 * waits in a handler slot for it: it waits in memory behind the attempt in flight with its slot
 * given back (`RecordSlot`, its record uncommitted), up to `ORDERING_HELD_EVENTS` per user and
 * `ORDERING_HELD_BYTES` per replica, past which those events are parked on the waiting topic in
 * order. The queue itself is in `OrderingStore` (`sluice.ordering`), the waiting events on the
 * destination's waiting topic.
 */
export class Ordering {
  readonly #chains: UserChains;
  readonly #flights = new Map<string, Flight>();
  readonly #held: HeldEvents;
  readonly #progress: PartitionProgress;
  readonly #turns: TurnWaits;
  readonly #parks: ParkWrites;
  /** What a move of a queue touches (`moveQueue`). */
  readonly #moves: QueueMovesDeps;
  readonly #inFlight: Flights;
  readonly #unordered: UnorderedEvents;
  #closed = false;
  private readonly deps: OrderingDeps;
  constructor(deps: OrderingDeps) {
    this.deps = deps;
    this.#chains = new UserChains(deps.now);
    const closed = () => this.#closed;
    this.#held = new HeldEvents(deps);
    this.#progress = new PartitionProgress({ idleWaitMs: deps.idleWaitMs, closed });
    this.#parks = new ParkWrites(deps);
    this.#unordered = new UnorderedEvents(deps);
    const flights = this.#flights;
    this.#turns = new TurnWaits({
      store: deps.store,
      flights,
      held: this.#held,
      maxUserBytes: (deps.maxHeldBytes ?? ORDERING_HELD_BYTES) / ORDERING_USER_SHARE_OF_HELD,
      idleWaitMs: deps.idleWaitMs,
      closed,
    });
    this.#moves = { store: deps.store, parks: this.#parks, turns: this.#turns, progress: this.#progress };
    this.#inFlight = new Flights({
      flights,
      store: deps.store,
      chains: this.#chains,
      held: this.#held,
      parks: this.#parks,
      turns: this.#turns,
      moves: this.#moves,
      unordered: this.#unordered,
    });
  }

  /**
   * A live, parked or retried job of an ordered destination: attempted now, or written to the
   * waiting topic behind its user's queue (or behind its user's attempt in flight); its outcome
   * moves the queue. Whether its destination is ordered is its definition in force now (a reload, a
   * runtime destination changed): turned on, its users' queues start with their next failure.
   */
  async step(turn: OrderedTurn, attempt: AttemptStep): Promise<void> {
    const { job, destination, partition } = turn;
    const key = job.key;
    if (key === null || destination.ordering === undefined) {
      await attempt(turn);
      // A retried head of a queue left from while the destination was ordered releases it, so a
      // queue turned on again later does not wait for it.
      if (key !== null && job.previous !== undefined) await this.#releasedUnordered(job, partition);
      return;
    }
    await this.deps.store.ready(partition);
    const at: QueueAt = { destination, key, partition };
    if (job.previous === undefined) return this.#fresh(at, turn, attempt);
    const id = destination.id;
    const isHead = await this.#chains.serial({ destinationId: id, key, kind: 'retry' }, async () =>
      retryDecision(this.deps.store.get(id, key), job.messageId),
    );
    const outcome = await attempt(turn);
    if (isHead === 'stray') return;
    await this.#chains.serial({ destinationId: id, key, kind: 'retry' }, async () => {
      const q = this.deps.store.get(id, key);
      if (q?.head !== job.messageId) return;
      await moveQueue(this.#moves, at, {
        before: q,
        after: afterStep(q, { messageId: job.messageId, outcome, onDeadLetter: onDeadLetterOf(at) }),
      });
    });
  }

  /**
   * A release marker (the retry service dead-lettered `messageId`): releases the queue if it is still
   * its head. A destination gone (deleted, removed from the file) has its queue, if any, released
   * whatever its `orderingOnDeadLetter` was: its waiting events then leave as they are read or as
   * their wait ends, dead-lettered `destination_deleted` by the intake decision; so is the queue left
   * from while a destination no longer ordered was (its waiting records, read, go as any event).
   */
  async release(marker: OrderingRelease, key: string | null, partition: number): Promise<void> {
    const id = marker.destinationId;
    const destination = this.deps.config().destinations.find((d) => d.id === id);
    if (key === null) return;
    await this.deps.store.ready(partition);
    const at: QueueAt = { destination: destination ?? { id }, key, partition };
    const onDeadLetter = destination?.ordering === undefined ? 'release' : onDeadLetterOf(at);
    await this.#chains.serial({ destinationId: id, key, kind: 'release' }, async () => {
      const q = this.deps.store.get(id, key);
      if (retryDecision(q, marker.messageId) !== 'head') return;
      const after = afterStep(q, { messageId: marker.messageId, outcome: 'dead', onDeadLetter });
      await moveQueue(this.#moves, at, { before: q, after });
    });
  }

  /**
   * An event of `job` the intake decision dead-lettered from `sluice.redeliver` or a parked topic
   * (its destination gone or disabled): it counts as dead-lettered for its user's queue, as any dead
   * letter does — the queue is released if it was the head — so that nothing waits for it.
   */
  deadLetteredAtIntake(job: DeliveryJob, partition: number): Promise<void> {
    return this.#leftQueue(job, { partition });
  }

  /**
   * A record of a waiting topic: delivered (or dead-lettered behind a dead head) when it is its
   * user's turn, dropped when it is a copy of an event no longer waiting, written again at the tail
   * otherwise — or, when it already went round once with no progress in its partition, kept here
   * until the next progress there (or `idleWaitMs`), so a stuck user's records do not spin. Its
   * destination gone or disabled (when read, or when a wait of it ends), it is dead-lettered at once
   * by the intake decision, whatever its place, and the queue moves past it if it was the front.
   */
  async onWaiting(fetched: ConsumedRecord, attempt: AttemptStep, slot?: RecordSlot): Promise<'rejected' | undefined> {
    // It may wait in memory for its turn: with its own bytes, not its whole fetch response's.
    const record = ownedRecord(fetched);
    const now = this.deps.now();
    const unparked = unparkJob(
      { key: record.key?.toString() ?? null, body: record.value ?? Buffer.alloc(0), headers: record.headers },
      now,
    );
    if (!unparked.ok || unparked.job.key === null) return 'rejected';
    const { job, acceptedAt } = unparked;
    const key = job.key!;
    const header = orderingHeaderOf(record);
    const place: WaitingPlace = { messageId: job.messageId, seq: header.seq, bytes: record.value?.length ?? 0 };
    if (header.epoch !== undefined) place.epoch = header.epoch;
    if (header.gap) place.gap = true;
    const destination = await this.#liveOrLeft(job, { partition: record.partition, place });
    if (!destination) return undefined;
    const turnOf = (acceptedAt: number | undefined): Turn => ({ job, destination, acceptedAt, source: 'waiting' });
    if (destination.ordering === undefined) {
      // No longer ordered: delivered as any event (a gap has none), and it leaves its place, so a
      // queue turned on again later does not wait for it.
      if (!place.gap) await attempt(turnOf(acceptedAt));
      await this.#leftQueue(job, { partition: record.partition, place });
      return undefined;
    }
    await this.deps.store.ready(record.partition);
    const at: QueueAt = { destination, key, partition: record.partition };
    // After a timeout or at shutdown the record is written again at the tail however it stands.
    let force = false;
    let turn: AwaitedTurn | undefined;
    for (;;) {
      const step = await this.#waitingStep(at, { record, job, place }, { round: header.round, force, turn });
      turn = undefined;
      if (step.step === 'done') return undefined;
      if (step.step === 'deliver') break;
      if (step.step === 'turn') {
        turn = step.turn;
        if (turn.inMemory) slot?.release();
        // Woken by a move, it decides again; after `idleWaitMs` without one, a record in its slot
        // goes round (the slot is needed), one in memory decides again and may wait on.
        force = !(await turn.moved) && !turn.inMemory;
      } else force = !(await this.#progress.idleUntilProgress(destination.id, record.partition, step.round));
      // The destination may have gone (or been disabled) while the record waited: asked again.
      if (!(await this.#liveOrLeft(job, { partition: record.partition, place, ...(turn && { turn }) })))
        return undefined;
    }
    // A gap (a park whose record Kafka refused, its event rejected): its turn moves the queue past it.
    if (place.gap) return void (await this.#inFlight.flown(at, { job, fromWaiting: place }, async () => 'delivered'));
    // Taken out now: the window moves by the whole time waited, idle waits included.
    const taken = unparkJob({ key, body: record.value ?? Buffer.alloc(0), headers: record.headers }, this.deps.now());
    await this.#inFlight.flown(at, { job, fromWaiting: place }, () =>
      attempt(turnOf(taken.ok ? taken.acceptedAt : acceptedAt)),
    );
    return undefined;
  }

  /**
   * What waits in this process now (`sluice_deliverer_ordering_waits`): users' attempts in flight,
   * events held in memory behind them, waiting records waiting for their turn (in their slot or in
   * memory), those idle until their partition's next progress, and steps waiting for an earlier
   * step of their user.
   */
  waits(): OrderingWaits {
    const turns = this.#turns.counts();
    return {
      flights: this.#flights.size,
      held: this.#held.size,
      turnInSlot: turns.inSlot,
      turnInMemory: turns.inMemory,
      idle: this.#progress.idle,
      chained: this.#chains.queued,
    };
  }

  /** The step of a user's chain running longest now (`sluice_deliverer_ordering_longest_step_seconds`). */
  longestStep(): { destinationId: string; kind: string; ms: number } | undefined {
    const step = this.#chains.longest();
    return step && { destinationId: step.destinationId, kind: step.kind, ms: this.deps.now() - step.since };
  }

  /** Stops the idle waits (shutdown): each idle record is written again at the tail, then committed. */
  close(): void {
    this.#closed = true;
    this.#progress.close();
    this.#turns.close();
  }

  /** A retry of a destination not ordered now: the queue left from while it was, if this is its head, is released. */
  async #releasedUnordered(job: DeliveryJob, partition: number): Promise<void> {
    await this.deps.store.ready(partition);
    if (this.deps.store.get(job.destinationId, job.key!)?.head === job.messageId)
      await this.#leftQueue(job, { partition });
  }

  /**
   * The intake decision for a waiting record (`liveDestinationOrDeadLetter`): its destination, or —
   * gone or disabled — undefined, the record dead-lettered (a gap record has no event to
   * dead-letter: its event was rejected) and its place left (`#leftQueue`).
   */
  async #liveOrLeft(job: DeliveryJob, where: LeftAt): Promise<Destination | undefined> {
    const ctx: LiveDestinationContext = where.place?.gap
      ? { config: this.deps.config, deadLetter: async () => undefined }
      : this.deps;
    const destination = await liveDestinationOrDeadLetter(ctx, job);
    if (destination === undefined) await this.#leftQueue(job, where);
    return destination;
  }

  /**
   * An event the intake decision dead-lettered, or one of a destination no longer ordered, leaves
   * its user's queue as any dead letter does: the queue is released if it was the head, and moves
   * on if it was the front waiting record. Nothing waits for it, should the destination send again
   * with per-user order; a waiting record read before its turn leaves its place as it is. The
   * user's queue is looked up whatever the destination is now (one may be left from while it was
   * ordered); the turn the record waited for, if any, is over.
   */
  async #leftQueue(job: DeliveryJob, where: LeftAt): Promise<void> {
    const id = job.destinationId;
    const key = job.key;
    if (key === null) return;
    await this.deps.store.ready(where.partition);
    const at: QueueAt = { destination: { id }, key, partition: where.partition };
    await this.#chains.serial({ destinationId: id, key, kind: 'left' }, async () => {
      if (where.turn) this.#turns.end(chainId(id, key), where.turn);
      const q = this.deps.store.get(id, key);
      if (q === undefined) return;
      const step = { messageId: job.messageId, outcome: 'dead' as const, onDeadLetter: 'release' as const };
      const after = afterStep(q, where.place ? { ...step, fromWaiting: where.place } : step);
      await moveQueue(this.#moves, at, { before: q, after });
    });
  }

  async #fresh(at: QueueAt, turn: OrderedTurn, attempt: AttemptStep): Promise<void> {
    const { destination, key } = at;
    const { job, acceptedAt: accepted } = turn;
    const id = destination.id;
    const chain = chainId(id, key);
    // Behind earlier steps of its user: waits for them with its slot given back (within the bound).
    let inMemory = this.#chains.has(chain) ? this.#held.giveBack(turn.slot, job.body.length) : undefined;
    const decided = await this.#chains
      .serial({ destinationId: id, key, kind: 'fresh' }, async () => {
        let q = this.deps.store.get(id, key);
        const flight = this.#flights.get(chain);
        const event = { messageId: job.messageId, bytes: job.body.length, inFlight: flight !== undefined };
        const decision = freshDecision(q, event, this.#limits());
        switch (decision) {
          case 'already':
            return undefined;
          case 'full':
            await this.deps.deadLetter(job, {
              reason: 'permanent_failure',
              lastError: `${waitingCount(q!)} events (${q!.bytes} bytes) of this user already wait behind ${q!.head ?? q!.last ?? 'its earlier events'} (the most per user and destination)`,
            });
            return undefined;
          case 'rewrite':
            // Parked before a crash, its record perhaps not written: written (again) at its place.
            await this.#parks.rewrite(at, job, { accepted, seq: unwrittenPlace(q, job.messageId)!, epoch: q!.epoch });
            return undefined;
          case 'wait': {
            if (flight && isIdle(q)) {
              // Behind its user's attempt in flight alone: waits in memory while the bounds allow.
              const held = this.#held.hold(chain, turn);
              if (held) return { held };
              if (!this.deps.store.admitsNew()) return 'unordered';
              // Past a bound: those waiting in memory go to the waiting topic first, in order.
              await this.#inFlight.parkHeld(at, flight);
              await this.#parks.roomInTail(at);
              const now = this.deps.store.get(id, key);
              const behind = flight.fresh && isIdle(now) ? flight.messageId : undefined;
              return { parked: this.#parks.park(at, job, { accepted, q: now, behind }) };
            }
            if (isIdle(q) && !this.deps.store.admitsNew()) return 'unordered';
            if (await this.#parks.roomInTail(at)) q = this.deps.store.get(id, key);
            const behind = flight?.fresh && isIdle(q) ? flight.messageId : undefined;
            return { parked: this.#parks.park(at, job, { accepted, q, behind }) };
          }
          default:
            this.#flights.set(chain, { messageId: job.messageId, fresh: decision === 'attempt' });
            return decision;
        }
      })
      .catch((err: unknown) => {
        inMemory?.();
        throw err;
      });
    if (typeof decided === 'object' && 'parked' in decided) {
      // Its park is written after the chain moved on: it waits for it with its slot given back.
      inMemory ??= this.#held.giveBack(turn.slot, job.body.length);
      try {
        await decided.parked;
      } finally {
        inMemory?.();
      }
      return;
    }
    inMemory?.();
    if (decided === undefined) return;
    if (decided === 'unordered') {
      this.#unordered.count(id, key);
      await attempt(turn);
      return;
    }
    if (typeof decided === 'object') {
      turn.slot?.release();
      // Its turn comes in flight already (set by the step that gave it), or it was parked.
      if ((await decided.held) === 'parked') return;
    }
    await this.#inFlight.flown(at, { job }, () => attempt(turn));
  }

  #waitingStep(
    at: QueueAt,
    waiting: { record: ConsumedRecord; job: DeliveryJob; place: WaitingPlace },
    read: { round: string | undefined; force: boolean; turn: AwaitedTurn | undefined },
  ): Promise<WaitingStep> {
    const { record, job, place } = waiting;
    const { destination, key } = at;
    const id = destination.id;
    return this.#chains.serial({ destinationId: id, key, kind: 'waiting' }, async (): Promise<WaitingStep> => {
      if (read.turn) this.#turns.end(chainId(id, key), read.turn);
      const q = this.deps.store.get(id, key);
      const inFlight = this.#flights.has(chainId(id, key));
      switch (waitingDecision(q, place, inFlight ? 'in-flight' : 'idle')) {
        case 'drop':
          return { step: 'done' };
        case 'cycle': {
          const moving = isMoving(q!, this.#flights.get(chainId(id, key)));
          if (place.seq !== undefined && !read.force && !this.#closed) {
            const waiting = { seq: place.seq, bytes: place.bytes, first: q!.first, inFlight, moving };
            const turn = this.#turns.await(at, waiting);
            if (turn) return { step: 'turn', turn };
          }
          const current = this.#progress.round(id, record.partition);
          if (!read.force && !this.#closed && read.round === current) return { step: 'idle', round: current };
          // The tail copy carries this round: read again before any progress, it waits instead.
          await this.deps.sink.send(record.topic, {
            key,
            value: record.value,
            headers: { ...headersText(record.headers), [ORDERING_HEADER]: orderingHeader(current, place) },
          });
          this.deps.metrics.orderingCycled.inc({ destination: id });
          return { step: 'done' };
        }
        case 'dead-letter': {
          if (!place.gap)
            await this.deps.deadLetter(job, {
              reason: 'permanent_failure',
              lastError: `dead-lettered with the event it waited for, ${q!.deadHead || 'an earlier event'}`,
            });
          await moveQueue(this.#moves, at, { before: q, after: afterDeadLettered(q!, place) });
          return { step: 'done' };
        }
        case 'deliver':
          // In flight from here (set before the chain moves on): nothing of this user overtakes it.
          this.#flights.set(chainId(id, key), { messageId: job.messageId, fresh: false });
          return { step: 'deliver' };
      }
    });
  }

  #limits() {
    return {
      maxEvents: this.deps.maxWaiting ?? ORDERING_MAX_WAITING,
      maxBytes: this.deps.maxWaitingBytes ?? ORDERING_MAX_WAITING_BYTES,
    };
  }
}
