import { randomUUID } from 'node:crypto';
import type { Destination, SluiceConfig } from '@sluice/config';
import { headersText, headerText, noRequestRecord, type OrderingRelease } from '@sluice/envelope';
import { SideRecordRefusedError, type ConsumedRecord, type RecordSink, type RecordSlot } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { waitingTopicName } from '@sluice/topology';
import {
  ORDERING_HEADER,
  ORDERING_HELD_BYTES,
  ORDERING_HELD_EVENTS,
  ORDERING_IDLE_AHEAD,
  ORDERING_IDLE_WAIT_MS,
  ORDERING_MAX_WAITING,
  ORDERING_MAX_WAITING_BYTES,
  ORDERING_UNORDERED_LOG_INTERVAL_MS,
} from '../service/constants.ts';
import type { DeliveryJob } from '../intake/delivery-job.ts';
import { LogRateLimiter } from '../service/log-rate-limit.ts';
import { parkedHeaders, unparkJob } from '../parking/parked-job.ts';
import { isInfrastructureFailure } from '../intake/infrastructure-errors.ts';
import type { DelivererMetrics } from '../service/metrics.ts';
import { liveDestinationOrDeadLetter } from '../intake/live-destination.ts';
import type { Turn } from '../intake/turn.ts';
import type { DeadLetter } from '../attempt/settle.ts';
import type { OrderingStore } from './ordering-store.ts';
import {
  afterDeadLettered,
  afterStep,
  freshDecision,
  isIdle,
  parked,
  retryDecision,
  tailFull,
  trimTail,
  unwrittenPlace,
  waitingCount,
  waitingDecision,
  type QueueState,
  type StepOutcome,
  type WaitingPlace,
} from './queue-rules.ts';

/** One attempt step of a turn's job (window check, pause, attempt) and what became of it. */
export type AttemptStep = (turn: Turn) => Promise<StepOutcome>;

/** A turn read from a partition: a live, parked or retried job of an ordered destination. */
export type OrderedTurn = Turn & { partition: number };

export interface OrderingDeps {
  config: () => SluiceConfig;
  sink: RecordSink;
  store: Pick<OrderingStore, 'ready' | 'get' | 'put' | 'admitsNew'>;
  /**
   * Dead-letters a waiting event: `permanent_failure` behind a dead head (`dead-letter-waiting`) or
   * when its user's full queue refuses it; `no_endpoints` when its destination is gone or disabled
   * (the intake decision, `liveDestinationOrDeadLetter`).
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
 * A waiting record of a moving queue waiting for its turn: woken when its user's queue moves. It
 * stays listed until its next step decides again (woken, it still counts as in hand).
 */
interface AwaitedTurn {
  seq: number;
  bytes: number;
  /** Resolves true when woken, false after `idleWaitMs` or at shutdown. */
  moved: Promise<boolean>;
  wake: () => void;
  woken: boolean;
  /** Its `idleWaitMs`, counted again from each move of its queue: only a queue that stopped moving sends it round. */
  timer: NodeJS.Timeout;
  /** Waits with its handler slot given back (near the front), its body counted in `ORDERING_HELD_BYTES`. */
  inMemory: boolean;
}

/**
 * An event waiting in memory behind its user's attempt in flight (its handler slot given back):
 * given its turn (`attempt`) when that attempt is done with, or parked behind it (`parked`).
 */
interface Held {
  turn: Turn;
  bytes: number;
  next: (next: 'attempt' | 'parked') => void;
  fail: (err: unknown) => void;
}

/**
 * A user's parks for one destination, as this process writes them: those whose waiting records
 * are being written (by place, in order), and the places whose records it wrote (they leave the
 * queue's `tail`).
 */
interface ParkLane {
  unwritten: Map<number, Promise<void>>;
  written: Set<number>;
}

/** An attempt of a user's event in flight, outside the chain: later events wait behind it. */
interface Flight {
  messageId: string;
  /** A fresh event attempted with nothing queued (it becomes the live head if an event is parked behind it). */
  fresh: boolean;
}

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
  readonly #chains = new Map<string, Promise<unknown>>();
  readonly #flights = new Map<string, Flight>();
  /** Per chain, the events waiting in memory behind its attempt in flight, in order; and their body bytes. */
  readonly #held = new Map<string, Held[]>();
  #heldBytes = 0;
  /** Progress (a queue moved) per destination and partition, and the waiting records idle until the next. */
  readonly #progress = new Map<string, number>();
  readonly #idle = new Map<string, Set<() => void>>();
  /** Per chain, the waiting records of a moving queue waiting for their turn, by sequence number. */
  readonly #turns = new Map<string, Map<number, AwaitedTurn>>();
  /** Per chain, its parks being written and those this process wrote (`ParkLane`). */
  readonly #lanes = new Map<string, ParkLane>();
  /** This process's rounds: a waiting record written by another process always goes round once more. */
  readonly #token = randomUUID();
  readonly #unorderedLog: LogRateLimiter;
  #closed = false;
  /** The destinations ordered at start: their waiting topics exist and are read (a reload's change applies at the next start). */
  readonly #ordered: Set<string>;
  private readonly deps: OrderingDeps;
  constructor(deps: OrderingDeps) {
    this.deps = deps;
    const config = deps.config();
    this.#ordered = new Set(config.destinations.filter((d) => d.ordering !== undefined).map((d) => d.id));
    this.#unorderedLog = new LogRateLimiter({ intervalMs: ORDERING_UNORDERED_LOG_INTERVAL_MS, now: deps.now });
  }

  /** The waiting topics to read: those of the ordered destinations at start. */
  static topics(config: SluiceConfig): string[] {
    return config.destinations.filter((d) => d.ordering !== undefined).map((d) => waitingTopicName(config, d.id));
  }

  /**
   * A live, parked or retried job of an ordered destination: attempted now, or written to the
   * waiting topic behind its user's queue (or behind its user's attempt in flight); its outcome
   * moves the queue.
   */
  async step(turn: OrderedTurn, attempt: AttemptStep): Promise<void> {
    const { job, destination, partition } = turn;
    const key = job.key;
    if (key === null || destination.ordering === undefined || !this.#ordered.has(destination.id)) {
      await attempt(turn);
      return;
    }
    await this.deps.store.ready(partition);
    const at: QueueAt = { destination, key, partition };
    if (job.previous === undefined) return this.#fresh(at, turn, attempt);
    const id = destination.id;
    const isHead = await this.#serial(id, key, async () => retryDecision(this.deps.store.get(id, key), job.messageId));
    const outcome = await attempt(turn);
    if (isHead === 'stray') return;
    await this.#serial(id, key, async () => {
      const q = this.deps.store.get(id, key);
      if (q?.head !== job.messageId) return;
      await this.#moved(at, {
        before: q,
        after: afterStep(q, { messageId: job.messageId, outcome, onDeadLetter: onDeadLetterOf(at) }),
      });
    });
  }

  /** A release marker (the retry service dead-lettered `messageId`): releases the queue if it is still its head. */
  async release(marker: OrderingRelease, key: string | null, partition: number): Promise<void> {
    const destination = this.deps.config().destinations.find((d) => d.id === marker.destinationId);
    if (key === null || destination?.ordering === undefined || !this.#ordered.has(destination.id)) return;
    await this.deps.store.ready(partition);
    const at: QueueAt = { destination, key, partition };
    await this.#serial(destination.id, key, async () => {
      const q = this.deps.store.get(destination.id, key);
      if (retryDecision(q, marker.messageId) !== 'head') return;
      const after = afterStep(q, { messageId: marker.messageId, outcome: 'dead', onDeadLetter: onDeadLetterOf(at) });
      await this.#moved(at, { before: q, after });
    });
  }

  /**
   * A record of a waiting topic: delivered (or dead-lettered behind a dead head) when it is its
   * user's turn, dropped when it is a copy of an event no longer waiting, written again at the tail
   * otherwise — or, when it already went round once with no progress in its partition, kept here
   * until the next progress there (or `idleWaitMs`), so a stuck user's records do not spin.
   */
  async onWaiting(record: ConsumedRecord, attempt: AttemptStep, slot?: RecordSlot): Promise<'rejected' | undefined> {
    const now = this.deps.now();
    const unparked = unparkJob(
      { key: record.key?.toString() ?? null, body: record.value ?? Buffer.alloc(0), headers: record.headers },
      now,
    );
    if (!unparked.ok || unparked.job.key === null) return 'rejected';
    const { job, acceptedAt } = unparked;
    const key = job.key!;
    const destination = await liveDestinationOrDeadLetter(this.deps, job);
    if (!destination) return undefined;
    const turnOf = (acceptedAt: number | undefined): Turn => ({ job, destination, acceptedAt, source: 'waiting' });
    if (destination.ordering === undefined) {
      // No longer ordered: delivered as any event.
      await attempt(turnOf(acceptedAt));
      return undefined;
    }
    await this.deps.store.ready(record.partition);
    const header = orderingHeaderOf(record);
    const place: WaitingPlace = { messageId: job.messageId, seq: header.seq, bytes: record.value?.length ?? 0 };
    if (header.gap) place.gap = true;
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
        force = !(await turn.moved);
        continue;
      }
      force = !(await this.#idleUntilProgress(destination.id, record.partition, step.round));
    }
    // A gap (a park whose record Kafka refused, its event rejected): its turn moves the queue past it.
    if (place.gap) return void (await this.#flown(at, { job, fromWaiting: place }, async () => 'delivered'));
    // Taken out now: the window moves by the whole time waited, idle waits included.
    const taken = unparkJob({ key, body: record.value ?? Buffer.alloc(0), headers: record.headers }, this.deps.now());
    await this.#flown(at, { job, fromWaiting: place }, () => attempt(turnOf(taken.ok ? taken.acceptedAt : acceptedAt)));
    return undefined;
  }

  /** Stops the idle waits (shutdown): each idle record is written again at the tail, then committed. */
  close(): void {
    this.#closed = true;
    for (const waiters of this.#idle.values()) for (const wake of [...waiters]) wake();
    for (const turns of this.#turns.values()) for (const turn of [...turns.values()]) turn.wake();
  }

  async #fresh(at: QueueAt, turn: OrderedTurn, attempt: AttemptStep): Promise<void> {
    const { destination, key } = at;
    const { job, acceptedAt: accepted } = turn;
    const id = destination.id;
    const chain = chainId(id, key);
    // Behind earlier steps of its user: waits for them with its slot given back (within the bound).
    let inMemory = this.#chains.has(chain) ? this.#giveBack(turn.slot, job.body.length) : undefined;
    const decided = await this.#serial(id, key, async () => {
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
          await this.#rewrite(at, job, { accepted, seq: unwrittenPlace(q, job.messageId)! });
          return undefined;
        case 'wait': {
          if (flight && isIdle(q)) {
            // Behind its user's attempt in flight alone: waits in memory while the bounds allow.
            const held = this.#hold(chain, turn);
            if (held) return { held };
            if (!this.deps.store.admitsNew()) return 'unordered';
            // Past a bound: those waiting in memory go to the waiting topic first, in order.
            await this.#parkHeld(at, flight);
            await this.#roomInTail(at);
            const now = this.deps.store.get(id, key);
            const behind = flight.fresh && isIdle(now) ? flight.messageId : undefined;
            return { parked: this.#park(at, job, { accepted, q: now, behind }) };
          }
          if (isIdle(q) && !this.deps.store.admitsNew()) return 'unordered';
          if (await this.#roomInTail(at)) q = this.deps.store.get(id, key);
          const behind = flight?.fresh && isIdle(q) ? flight.messageId : undefined;
          return { parked: this.#park(at, job, { accepted, q, behind }) };
        }
        default:
          this.#flights.set(chain, { messageId: job.messageId, fresh: decision === 'attempt' });
          return decision;
      }
    }).catch((err: unknown) => {
      inMemory?.();
      throw err;
    });
    if (typeof decided === 'object' && 'parked' in decided) {
      // Its park is written after the chain moved on: it waits for it with its slot given back.
      inMemory ??= this.#giveBack(turn.slot, job.body.length);
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
      this.#unordered(id, key);
      await attempt(turn);
      return;
    }
    if (typeof decided === 'object') {
      turn.slot?.release();
      // Its turn comes in flight already (set by the step that gave it), or it was parked.
      if ((await decided.held) === 'parked') return;
    }
    await this.#flown(at, { job }, () => attempt(turn));
  }

  /**
   * Runs an attempt registered as in flight, then moves the queue by its outcome. An attempt that
   * throws a failure of its own record (it goes to `sluice.rejected`) counts as dead for the queue,
   * so nothing waits for it forever; an infrastructure failure leaves the queue as it is (the
   * record is read again after the restart).
   */
  async #flown(
    at: QueueAt,
    flight: { job: DeliveryJob; fromWaiting?: WaitingPlace },
    run: () => Promise<StepOutcome>,
  ): Promise<void> {
    const { job, ...how } = flight;
    const { destination, key } = at;
    const id = destination.id;
    const chain = chainId(id, key);
    if (how.fromWaiting) this.#flights.set(chain, { messageId: job.messageId, fresh: false });
    const written: Promise<void>[] = [];
    let outcome: StepOutcome;
    try {
      outcome = await run();
    } catch (err) {
      await this.#landed(at, async () => {
        if (isInfrastructureFailure(err)) throw err;
        const q = this.deps.store.get(id, key);
        const step = { messageId: job.messageId, outcome: 'dead' as const, onDeadLetter: 'release' as const, ...how };
        await this.#moved(at, { before: q, after: afterStep(q, step) });
      });
      throw err;
    }
    await this.#landed(at, async () => {
      const q = this.deps.store.get(id, key);
      const after = afterStep(q, { messageId: job.messageId, outcome, onDeadLetter: onDeadLetterOf(at), ...how });
      if (isIdle(q) && !isIdle(after) && !this.deps.store.admitsNew()) {
        // A new queue while the memory budget is spent: its later events are not held for it.
        this.#unordered(id, key);
        return;
      }
      await this.#moved(at, { before: q, after, ...(how.fromWaiting && { written }) });
    });
    // The next event of the queue went once this one was done with: a crash before this state
    // record is written sends this one again (a duplicate), never one out of order.
    await Promise.all(written);
  }

  /**
   * The user's attempt in flight is done with (`move` writes what became of it): the next event
   * waiting in memory behind it goes in flight, or — the user now held (the attempt became its
   * head) — they are all parked behind it, in order. When `move` throws, they fail with it (an
   * infrastructure failure: their records are read again after the restart).
   */
  #landed(at: QueueAt, move: () => Promise<void>): Promise<void> {
    const { destination, key } = at;
    const chain = chainId(destination.id, key);
    return this.#serial(destination.id, key, async () => {
      this.#flights.delete(chain);
      const before = this.deps.store.get(destination.id, key);
      try {
        await move();
      } catch (err) {
        for (const held of this.#takeHeld(chain)) held.fail(err);
        throw err;
      }
      const held = this.#held.get(chain);
      // A queue that moved woke its waiting records already (`#moved`); one that did not may have waited for this attempt.
      if (!held?.length) {
        if (this.deps.store.get(destination.id, key) === before) this.#wakeTurns(destination.id, key);
        return;
      }
      if (!isIdle(this.deps.store.get(destination.id, key))) return this.#parkHeld(at, undefined);
      const next = this.#takeHeld(chain, 1)[0]!;
      this.#flights.set(chain, { messageId: next.turn.job.messageId, fresh: true });
      next.next('attempt');
    });
  }

  /** Waits in memory behind the user's attempt in flight, unless that passes a bound (undefined). */
  #hold(chain: string, turn: Turn): Promise<'attempt' | 'parked'> | undefined {
    const held = this.#held.get(chain) ?? [];
    const bytes = turn.job.body.length;
    if (held.length >= (this.deps.maxHeld ?? ORDERING_HELD_EVENTS)) return undefined;
    if (this.#heldBytes + bytes > (this.deps.maxHeldBytes ?? ORDERING_HELD_BYTES)) return undefined;
    return new Promise((next, fail) => {
      held.push({ turn, bytes, next, fail });
      this.#held.set(chain, held);
      this.#heldBytes += bytes;
      this.deps.metrics.orderingHeldBytes.set(this.#heldBytes);
    });
  }

  /** Takes the first `count` (default all) events waiting in memory behind the chain's attempt. */
  #takeHeld(chain: string, count?: number): Held[] {
    const held = this.#held.get(chain) ?? [];
    const taken = held.splice(0, count ?? held.length);
    if (held.length === 0) this.#held.delete(chain);
    for (const h of taken) this.#heldBytes -= h.bytes;
    this.deps.metrics.orderingHeldBytes.set(this.#heldBytes);
    return taken;
  }

  /**
   * Parks the events waiting in memory behind the user's attempt, in order: behind `flight` (which
   * becomes the live head) while it is still in flight, else behind the user's head. One whose
   * park fails is told so (its record is rejected); an infrastructure failure fails the rest too.
   */
  async #parkHeld(at: QueueAt, flight: Flight | undefined): Promise<void> {
    const chain = chainId(at.destination.id, at.key);
    const held = this.#takeHeld(chain);
    for (const h of held) {
      await this.#roomInTail(at);
      const q = this.deps.store.get(at.destination.id, at.key);
      const behind = flight?.fresh && isIdle(q) ? flight.messageId : undefined;
      this.#park(at, h.turn.job, { accepted: h.turn.acceptedAt, q, behind }).then(() => h.next('parked'), h.fail);
    }
  }

  #waitingStep(
    at: QueueAt,
    waiting: { record: ConsumedRecord; job: DeliveryJob; place: WaitingPlace },
    read: { round: string | undefined; force: boolean; turn: AwaitedTurn | undefined },
  ): Promise<WaitingStep> {
    const { record, job, place } = waiting;
    const { destination, key } = at;
    const id = destination.id;
    return this.#serial(id, key, async (): Promise<WaitingStep> => {
      if (read.turn) this.#endTurn(chainId(id, key), read.turn);
      const q = this.deps.store.get(id, key);
      const inFlight = this.#flights.has(chainId(id, key));
      switch (waitingDecision(q, place, inFlight ? 'in-flight' : 'idle')) {
        case 'drop':
          return { step: 'done' };
        case 'cycle': {
          const moving = isMoving(q!, this.#flights.get(chainId(id, key)));
          if (moving && place.seq !== undefined && !read.force && !this.#closed) {
            const turn = this.#awaitTurn(at, { seq: place.seq, bytes: place.bytes, first: q!.first, inFlight });
            if (turn) return turn;
          }
          const current = this.#round(id, record.partition);
          if (!read.force && !this.#closed && read.round === current) return { step: 'idle', round: current };
          // The tail copy carries this round: read again before any progress, it waits instead.
          await this.deps.sink.send(record.topic, {
            key,
            value: record.value,
            headers: { ...headersText(record.headers), [ORDERING_HEADER]: orderingHeader(current, place.seq) },
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
          await this.#moved(at, { before: q, after: afterDeadLettered(q!, place) });
          return { step: 'done' };
        }
        case 'deliver':
          // In flight from here (set before the chain moves on): nothing of this user overtakes it.
          this.#flights.set(chainId(id, key), { messageId: job.messageId, fresh: false });
          return { step: 'deliver' };
      }
    });
  }

  /**
   * Parks the job: its place in the queue is set at once, so the user's next step goes on; its
   * state record leaves with the other puts of the tick (`OrderingStore.put`), then its waiting
   * record and its `waiting` attempt record. Resolves once parked. Until its waiting record is
   * written the park is in the queue's `tail`: read again after a crash, the job writes its record
   * at its place (`#rewrite`), so no place stays without a record. A waiting record Kafka refuses
   * for its content leaves a gap record at its place (the queue moves past it) and fails the park:
   * the event goes to `sluice.rejected`.
   */
  #park(
    at: QueueAt,
    job: DeliveryJob,
    how: { accepted: number | undefined; q: QueueState | undefined; behind: string | undefined },
  ): Promise<void> {
    const { destination, key, partition } = at;
    const lane = this.#lane(chainId(destination.id, key));
    const q = trimTail(how.q, (seq) => lane.written.has(seq));
    for (const seq of lane.written) if (seq < (q?.tail?.from ?? Number.POSITIVE_INFINITY)) lane.written.delete(seq);
    const event = { messageId: job.messageId, bytes: job.body.length, ...(how.behind && { behind: how.behind }) };
    const { state, seq } = parked(q, event);
    const stateWritten = this.deps.store.put({ destinationId: destination.id, key, partition }, state);
    const done = stateWritten
      .then(() => this.#writeParked(job, { accepted: how.accepted, seq, head: state.head ?? '' }))
      .then(
        () => {
          lane.written.add(seq);
          this.deps.metrics.orderingWaiting.inc({ destination: destination.id });
        },
        async (err: unknown) => {
          if (isInfrastructureFailure(err)) throw err;
          await this.#writeGap(job, { accepted: how.accepted, seq });
          lane.written.add(seq);
          throw err;
        },
      )
      .finally(() => {
        lane.unwritten.delete(seq);
        this.#dropLane(at);
      });
    lane.unwritten.set(seq, done);
    return done;
  }

  /** The waiting record and the `waiting` attempt record of a park (an attempt record Kafka refuses is counted and logged by the sink, not a failure of the park). */
  async #writeParked(
    job: DeliveryJob,
    how: { accepted: number | undefined; seq: number; head: string },
  ): Promise<void> {
    const attempt = this.deps.sink
      .send(this.deps.config().kafka.topics.attempts, {
        key: job.key,
        value: noRequestRecord(job, 'waiting', this.deps.now(), how.head),
      })
      .catch((err: unknown) => {
        if (!(err instanceof SideRecordRefusedError)) throw err;
      });
    const [waiting, written] = await Promise.allSettled([this.#writeWaiting(job, how.accepted, how.seq), attempt]);
    if (waiting.status === 'rejected') throw waiting.reason;
    if (written.status === 'rejected') throw written.reason;
  }

  /** A park's place whose waiting record Kafka refused: a record with no body that the queue moves past. */
  #writeGap(job: DeliveryJob, how: { accepted: number | undefined; seq: number }): Promise<void> {
    const headers = {
      ...parkedHeaders(job, how.accepted, this.deps.now()),
      [ORDERING_HEADER]: JSON.stringify({ round: '', seq: how.seq, gap: true }),
    };
    const topic = waitingTopicName(this.deps.config(), job.destinationId);
    return this.deps.sink.send(topic, { key: job.key, value: Buffer.alloc(0), headers });
  }

  /**
   * A park read again whose waiting record may be missing: written at its place. One still being
   * written by this process (the same message id again) is left to that park.
   */
  async #rewrite(at: QueueAt, job: DeliveryJob, how: { accepted: number | undefined; seq: number }): Promise<void> {
    const lane = this.#lane(chainId(at.destination.id, at.key));
    if (lane.unwritten.has(how.seq)) return;
    await this.#writeWaiting(job, how.accepted, how.seq);
    lane.written.add(how.seq);
  }

  /**
   * Waits, in the user's chain, while the queue's tail is full (`tailFull`, the parks this process
   * wrote trimmed off) and its oldest park is still being written here, so a park never pushes out
   * one whose record may be missing. An oldest park from before this start is pushed out by the
   * next park (`parked`): its event was read again and wrote its record, or was committed with it
   * (docs/reference/ordering.md). True when it waited (the queue may have been trimmed meanwhile).
   */
  async #roomInTail(at: QueueAt): Promise<boolean> {
    const lane = this.#lanes.get(chainId(at.destination.id, at.key));
    let waited = false;
    for (;;) {
      const q = lane && trimTail(this.deps.store.get(at.destination.id, at.key), (seq) => lane.written.has(seq));
      const oldest = q?.tail && tailFull(q) ? lane!.unwritten.get(q.tail.from) : undefined;
      if (oldest === undefined) return waited;
      waited = true;
      await Promise.allSettled([oldest]);
    }
  }

  #lane(chain: string): ParkLane {
    let lane = this.#lanes.get(chain);
    if (!lane) this.#lanes.set(chain, (lane = { unwritten: new Map(), written: new Set() }));
    return lane;
  }

  /** Forgets a user's parks once none is being written and its queue has no tail left to trim (after a park, or a move of the queue). */
  #dropLane(at: QueueAt): void {
    const chain = chainId(at.destination.id, at.key);
    const lane = this.#lanes.get(chain);
    if (lane && lane.unwritten.size === 0 && !this.deps.store.get(at.destination.id, at.key)?.tail)
      this.#lanes.delete(chain);
  }

  /**
   * Gives the record's slot back while its job waits in memory (for its user's earlier steps, or
   * for its park to be written), counted in `ORDERING_HELD_BYTES`; past that bound it keeps its
   * slot (undefined). Returns the uncounting.
   */
  #giveBack(slot: RecordSlot | undefined, bytes: number): (() => void) | undefined {
    if (!slot || this.#heldBytes + bytes > (this.deps.maxHeldBytes ?? ORDERING_HELD_BYTES)) return undefined;
    this.#countHeld(bytes);
    slot.release();
    let counted = true;
    return () => {
      if (counted) this.#countHeld(-bytes);
      counted = false;
    };
  }

  #writeWaiting(job: DeliveryJob, accepted: number | undefined, seq: number): Promise<void> {
    const config = this.deps.config();
    const headers = { ...parkedHeaders(job, accepted, this.deps.now()), [ORDERING_HEADER]: orderingHeader('', seq) };
    return this.deps.sink.send(waitingTopicName(config, job.destinationId), { key: job.key, value: job.body, headers });
  }

  /**
   * A record of a moving queue (held by nothing but attempts in flight) read before its turn waits
   * for it here rather than going round the waiting topic: near the front (`ORDERING_IDLE_AHEAD`,
   * within `ORDERING_HELD_BYTES`) in memory with its slot given back; further back in its slot, while
   * the front of the queue is in hand (in flight, or waiting here), so that the queue moves and
   * wakes it. Undefined when neither applies (it goes round, or waits for its partition's progress).
   */
  #awaitTurn(
    at: QueueAt,
    place: { seq: number; bytes: number; first: number; inFlight: boolean },
  ): WaitingStep | undefined {
    const chain = chainId(at.destination.id, at.key);
    const turns = this.#turns.get(chain) ?? new Map<number, AwaitedTurn>();
    // A second copy of a record already waiting (read again after a restart) takes the usual path.
    if (turns.has(place.seq)) return undefined;
    const inMemory =
      place.seq - place.first < ORDERING_IDLE_AHEAD &&
      this.#heldBytes + place.bytes <= (this.deps.maxHeldBytes ?? ORDERING_HELD_BYTES);
    if (!inMemory && !place.inFlight && !turns.has(place.first)) return undefined;
    this.#turns.set(chain, turns);
    if (inMemory) this.#countHeld(place.bytes);
    let wake!: (moved: boolean) => void;
    const moved = new Promise<boolean>((resolve) => (wake = resolve));
    const timer = setTimeout(() => done('timeout'), this.deps.idleWaitMs ?? ORDERING_IDLE_WAIT_MS);
    const turn: AwaitedTurn = {
      seq: place.seq,
      bytes: place.bytes,
      moved,
      inMemory,
      woken: false,
      wake: () => done('moved'),
      timer,
    };
    const done = (why: WakeReason) => {
      if (turn.woken) return;
      turn.woken = true;
      clearTimeout(timer);
      wake(why === 'moved' && !this.#closed);
    };
    turns.set(place.seq, turn);
    return { step: 'turn', turn };
  }

  /** A record's wait for its turn is over (its step decides again): no longer listed nor counted. */
  #endTurn(chain: string, turn: AwaitedTurn): void {
    const turns = this.#turns.get(chain);
    if (turns?.get(turn.seq) !== turn) return;
    turns.delete(turn.seq);
    if (turns.size === 0) this.#turns.delete(chain);
    if (turn.inMemory) this.#countHeld(-turn.bytes);
  }

  /**
   * The user's queue moved (or its attempt in flight ended): wakes the record whose turn came and
   * those now near enough the front to wait in memory; all of them when the queue is held again
   * or its front is nowhere in hand (those waiting in their slots then go round, so the partition
   * is read on to the front).
   */
  #wakeTurns(destinationId: string, key: string): void {
    const chain = chainId(destinationId, key);
    const turns = this.#turns.get(chain);
    if (!turns) return;
    const q = this.deps.store.get(destinationId, key);
    const inFlight = this.#flights.has(chain);
    const moving = q !== undefined && isMoving(q, this.#flights.get(chain));
    if (!moving || (!inFlight && !turns.has(q.first))) {
      for (const turn of [...turns.values()]) turn.wake();
      return;
    }
    for (const turn of turns.values()) if (!turn.woken) turn.timer.refresh();
    for (let seq = q.first; seq < q.first + ORDERING_IDLE_AHEAD; seq++) {
      const turn = turns.get(seq);
      if (turn && !turn.woken && (seq === q.first ? !inFlight : !turn.inMemory)) turn.wake();
    }
  }

  #countHeld(bytes: number): void {
    this.#heldBytes += bytes;
    this.deps.metrics.orderingHeldBytes.set(this.#heldBytes);
  }

  /**
   * Writes a moved queue, and wakes the idle waiting records of its partition when it freed
   * something. With `written`, the state record's write is not waited for here but added to it
   * (the queue in memory moves at once, so the next event's turn need not wait for Kafka): the
   * caller waits for it before its record is done with, and the writes of one queue go in order.
   */
  async #moved(at: QueueAt, move: QueueMove): Promise<void> {
    const { before, after, written } = move;
    if (after === before) return;
    const write = this.deps.store.put(
      { destinationId: at.destination.id, key: at.key, partition: at.partition },
      after,
    );
    this.#dropLane(at);
    if (written) {
      // Waited for by the caller; until then a failure is not unhandled.
      write.catch(() => undefined);
      written.push(write);
    } else await write;
    this.#wakeTurns(at.destination.id, at.key);
    const freed =
      before?.head !== after?.head ||
      before?.first !== after?.first ||
      before?.legacy?.length !== after?.legacy?.length;
    if (freed && after?.head === undefined) this.#progressed(at.destination.id, at.partition);
  }

  #unordered(destinationId: string, key: string): void {
    this.deps.metrics.orderingUnordered.inc({ destination: destinationId });
    const admitted = this.#unorderedLog.admit(destinationId);
    if (admitted.write)
      this.deps.logger.warn(
        { destinationId, key, suppressed: admitted.suppressed },
        'ordering state memory budget spent (delivery.orderingStateBytes): event not held in order',
      );
  }

  #limits() {
    return {
      maxEvents: this.deps.maxWaiting ?? ORDERING_MAX_WAITING,
      maxBytes: this.deps.maxWaitingBytes ?? ORDERING_MAX_WAITING_BYTES,
    };
  }

  #progressed(id: string, partition: number): void {
    const at = `${id}/${partition}`;
    this.#progress.set(at, (this.#progress.get(at) ?? 0) + 1);
    const waiters = this.#idle.get(at);
    if (waiters) for (const wake of [...waiters]) wake();
  }

  #round(id: string, partition: number): string {
    return `${this.#token}:${this.#progress.get(`${id}/${partition}`) ?? 0}`;
  }

  /**
   * Resolves true at the next progress in the partition after `round` (at once if some came between
   * the decision and this call), false after `idleWaitMs` or at shutdown.
   */
  #idleUntilProgress(id: string, partition: number, round: string | undefined): Promise<boolean> {
    if (this.#round(id, partition) !== round) return Promise.resolve(!this.#closed);
    const at = `${id}/${partition}`;
    let waiters = this.#idle.get(at);
    if (!waiters) this.#idle.set(at, (waiters = new Set()));
    const set = waiters;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => done('timeout'), this.deps.idleWaitMs ?? ORDERING_IDLE_WAIT_MS);
      const done = (why: WakeReason) => {
        clearTimeout(timer);
        set.delete(wake);
        resolve(why === 'moved' && !this.#closed);
      };
      const wake = () => done('moved');
      set.add(wake);
    });
  }

  /** Runs `work` after every earlier step of the same destination and user (never an attempt: those run outside). */
  #serial<T>(destinationId: string, key: string, work: () => Promise<T>): Promise<T> {
    const id = chainId(destinationId, key);
    const before = this.#chains.get(id) ?? Promise.resolve();
    const run = before.then(work, work);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.#chains.set(id, tail);
    void tail.then(() => {
      if (this.#chains.get(id) === tail) this.#chains.delete(id);
    });
    return run;
  }
}

/** A queue before and after a step, and where its state record's write goes when the caller waits for it (`#moved`). */
interface QueueMove {
  before: QueueState | undefined;
  after: QueueState | undefined;
  written?: Promise<void>[];
}

/** The queue a step works on: its destination, user and partition (where its state record goes). */
interface QueueAt {
  destination: Destination;
  key: string;
  partition: number;
}

/** Why a wait ended: its queue (or partition) moved, or its `idleWaitMs` passed. */
type WakeReason = 'moved' | 'timeout';

const chainId = (destinationId: string, key: string) => `${destinationId}\u0000${key}`;

const onDeadLetterOf = (at: QueueAt) => at.destination.ordering!.onDeadLetter;

/**
 * Held by nothing but attempts in flight (no head, or a live head in flight) and no record of the
 * list format ahead: its numbered records go one after the other, each as the one before is done.
 */
const isMoving = (q: QueueState, flight: Flight | undefined) =>
  (q.head === undefined || (q.live === true && flight !== undefined)) && (q.legacy?.length ?? 0) === 0;

/** The `sluice-ordering` header of a waiting record: the round it was written in and its place in the queue. */
function orderingHeader(round: string, seq: number | undefined): string {
  return JSON.stringify(seq === undefined ? { round } : { round, seq });
}

function orderingHeaderOf(record: ConsumedRecord): {
  round: string | undefined;
  seq: number | undefined;
  gap: boolean;
} {
  const text = headerText(record.headers, ORDERING_HEADER);
  if (text === undefined) return { round: undefined, seq: undefined, gap: false };
  try {
    const { round, seq, gap } = JSON.parse(text) as { round?: unknown; seq?: unknown; gap?: unknown };
    const place = typeof seq === 'number' && Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined;
    return {
      round: typeof round === 'string' ? round : undefined,
      seq: place,
      gap: gap === true && place !== undefined,
    };
  } catch {
    return { round: undefined, seq: undefined, gap: false };
  }
}
