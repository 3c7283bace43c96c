import { randomUUID } from 'node:crypto';
import type { Destination, SluiceConfig } from '@sluice/config';
import { headersText, headerText, noRequestRecord, type OrderingRelease } from '@sluice/envelope';
import { waitingTopicName, type ConsumedRecord, type RecordSink } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import { ORDERING_HEADER, ORDERING_IDLE_WAIT_MS, ORDERING_MAX_WAITING } from './constants.ts';
import type { OrderingStore } from './adapters/ordering-store.ts';
import type { DeliveryJob } from './domain/delivery-job.ts';
import {
  afterDeadLettered,
  afterStep,
  freshDecision,
  parked,
  retryDecision,
  waitingDecision,
  type KeyQueue,
  type StepOutcome,
} from './domain/ordering.ts';
import { parkedHeaders, unparkJob } from './domain/parked-job.ts';
import type { DelivererMetrics } from './metrics.ts';

/** One attempt step of a job (window check, pause, attempt) and what became of it. */
export type AttemptStep = (
  job: DeliveryJob,
  destination: Destination,
  accepted: number | undefined,
  fromParked: boolean,
) => Promise<StepOutcome>;

export interface OrderingDeps {
  config: () => SluiceConfig;
  sink: RecordSink;
  store: OrderingStore;
  /** Dead-letters a waiting event behind a dead head (`dead-letter-waiting`), or one its user's full queue refuses. */
  deadLetter: (job: DeliveryJob, lastError: string) => Promise<void>;
  metrics: DelivererMetrics;
  logger: Logger;
  now: () => number;
  /** The most events of one user waiting for one destination (`ORDERING_MAX_WAITING`); a later one is dead-lettered. */
  maxWaiting?: number;
  /** How long a waiting record that went round once with no progress waits for one; default 30 s. */
  idleWaitMs?: number;
}

/** Why the handler of a waiting record stopped: done with it, or to wait for progress in its partition. */
type WaitingStep = 'done' | 'idle';

/**
 * Per-user order for the destinations that ask for it (docs/reference/ordering.md). Every step of a
 * user's event for such a destination runs after the previous one (a chain per destination and
 * user, in memory only while an attempt is in flight); the queue itself is in `OrderingStore`
 * (`sluice.ordering`) and the waiting events on the destination's waiting topic.
 */
export class Ordering {
  readonly #chains = new Map<string, Promise<unknown>>();
  /** Progress (a queue moved) per destination and partition, and the waiting records idle until the next. */
  readonly #progress = new Map<string, number>();
  readonly #idle = new Map<string, Set<() => void>>();
  /** This process's rounds: a waiting record written by another process always goes round once more. */
  readonly #token = randomUUID();
  #closed = false;
  /** The destinations ordered at start: their waiting topics exist and are read (a reload's change applies at the next start). */
  readonly #ordered: Set<string>;
  private readonly deps: OrderingDeps;
  constructor(deps: OrderingDeps) {
    this.deps = deps;
    const config = deps.config();
    this.#ordered = new Set(config.destinations.filter((d) => d.ordering !== undefined).map((d) => d.id));
  }

  /** The waiting topics to read: those of the ordered destinations at start. */
  static topics(config: SluiceConfig): string[] {
    return config.destinations.filter((d) => d.ordering !== undefined).map((d) => waitingTopicName(config, d.id));
  }

  /**
   * A live, parked or retried job of an ordered destination: attempted now, or written to the
   * waiting topic behind its user's queue; its outcome moves the queue.
   */
  async step(
    job: DeliveryJob,
    destination: Destination,
    accepted: number | undefined,
    partition: number,
    fromParked: boolean,
    attempt: AttemptStep,
  ): Promise<void> {
    const key = job.key;
    if (key === null || destination.ordering === undefined || !this.#ordered.has(destination.id)) {
      await attempt(job, destination, accepted, fromParked);
      return;
    }
    const { onDeadLetter } = destination.ordering;
    await this.deps.store.ready(partition);
    await this.#serial(destination.id, key, async () => {
      const q = this.deps.store.get(destination.id, key);
      if (job.previous === undefined) {
        // Already the head (read again after a crash): its retry is in the retry path.
        if (q?.head === job.messageId) return;
        const decision = freshDecision(q, this.deps.maxWaiting ?? ORDERING_MAX_WAITING);
        if (decision === 'wait') return this.#park(job, accepted, q);
        if (decision === 'full')
          return this.deps.deadLetter(
            job,
            `${q!.queue.length} events of this user already wait behind ${q!.head ?? q!.queue[0]} (the most per user and destination)`,
          );
        const outcome = await attempt(job, destination, accepted, fromParked);
        if (outcome === 'retrying')
          await this.deps.store.put(destination.id, key, afterStep(q, job.messageId, outcome, onDeadLetter));
        return;
      }
      if (retryDecision(q, job.messageId) === 'stray') {
        await attempt(job, destination, accepted, fromParked);
        return;
      }
      const outcome = await attempt(job, destination, accepted, fromParked);
      await this.#moved(destination.id, key, partition, q, afterStep(q, job.messageId, outcome, onDeadLetter));
    });
  }

  /** A release marker (the retry service dead-lettered `messageId`): releases the queue if it is still its head. */
  async release(marker: OrderingRelease, key: string | null, partition: number): Promise<void> {
    const destination = this.deps.config().destinations.find((d) => d.id === marker.destinationId);
    if (key === null || destination?.ordering === undefined || !this.#ordered.has(destination.id)) return;
    const { onDeadLetter } = destination.ordering;
    await this.deps.store.ready(partition);
    await this.#serial(destination.id, key, async () => {
      const q = this.deps.store.get(destination.id, key);
      if (retryDecision(q, marker.messageId) !== 'head') return;
      await this.#moved(destination.id, key, partition, q, afterStep(q, marker.messageId, 'dead', onDeadLetter));
    });
  }

  /**
   * A record of a waiting topic: delivered (or dead-lettered behind a dead head) when it is its
   * user's turn, dropped when it is a copy of an event no longer waiting, written again at the tail
   * otherwise — or, when it already went round once with no progress in its partition, kept here
   * until the next progress there (or `idleWaitMs`), so a stuck user's records do not spin.
   */
  async onWaiting(record: ConsumedRecord, attempt: AttemptStep): Promise<'rejected' | undefined> {
    const now = this.deps.now();
    const unparked = unparkJob(record.key?.toString() ?? null, record.value ?? Buffer.alloc(0), record.headers, now);
    if (!unparked.ok || unparked.job.key === null) return 'rejected';
    const { job, acceptedAt } = unparked;
    const key = job.key!;
    const destination = this.deps.config().destinations.find((d) => d.id === job.destinationId);
    if (!destination?.enabled) {
      await this.deps.deadLetter(job, `destination ${job.destinationId} is ${destination ? 'disabled' : 'gone'}`);
      return undefined;
    }
    if (destination.ordering === undefined) {
      // No longer ordered: delivered as any event.
      await attempt(job, destination, acceptedAt, true);
      return undefined;
    }
    await this.deps.store.ready(record.partition);
    const round = roundOf(record);
    // After a timeout or at shutdown the record is written again at the tail however it stands.
    let force = false;
    while (
      (await this.#waitingStep(record, job, acceptedAt, destination, key, force ? undefined : round, attempt)) ===
      'idle'
    )
      force = !(await this.#idleUntilProgress(destination.id, record.partition, round));
    return undefined;
  }

  /** Stops the idle waits (shutdown): each idle record is written again at the tail, then committed. */
  close(): void {
    this.#closed = true;
    for (const waiters of this.#idle.values()) for (const wake of [...waiters]) wake();
  }

  #waitingStep(
    record: ConsumedRecord,
    job: DeliveryJob,
    acceptedAt: number | undefined,
    destination: Destination,
    key: string,
    round: string | undefined,
    attempt: AttemptStep,
  ): Promise<WaitingStep> {
    const { onDeadLetter } = destination.ordering!;
    const id = destination.id;
    return this.#serial(id, key, async (): Promise<WaitingStep> => {
      const q = this.deps.store.get(id, key);
      switch (waitingDecision(q, job.messageId)) {
        case 'drop':
          return 'done';
        case 'cycle': {
          const current = this.#round(id, record.partition);
          if (round === current && !this.#closed) return 'idle';
          // The tail copy carries this round: read again before any progress, it waits instead.
          await this.deps.sink.send(record.topic, {
            key,
            value: record.value,
            headers: { ...headersText(record.headers), [ORDERING_HEADER]: JSON.stringify({ round: current }) },
          });
          this.deps.metrics.orderingCycled.inc({ destination: id });
          return 'done';
        }
        case 'dead-letter': {
          const head = q!.deadHead ?? 'an earlier event';
          await this.deps.deadLetter(job, `dead-lettered with the event it waited for, ${head}`);
          await this.#moved(id, key, record.partition, q, afterDeadLettered(q!, job.messageId));
          return 'done';
        }
        case 'deliver': {
          // Taken out now: the window moves by the whole time waited, idle waits included.
          const now = unparkJob(key, record.value ?? Buffer.alloc(0), record.headers, this.deps.now());
          const outcome = await attempt(job, destination, now.ok ? now.acceptedAt : acceptedAt, true);
          await this.#moved(id, key, record.partition, q, afterStep(q, job.messageId, outcome, onDeadLetter, true));
          return 'done';
        }
      }
    });
  }

  /** Writes the job to the waiting topic, then adds it to its user's queue (both acknowledged). */
  async #park(job: DeliveryJob, accepted: number | undefined, q: KeyQueue | undefined): Promise<void> {
    const config = this.deps.config();
    const key = job.key!;
    const now = this.deps.now();
    const waitingFor = q?.head ?? q?.queue[0] ?? '';
    const headers = { ...parkedHeaders(job, accepted, now), [ORDERING_HEADER]: JSON.stringify({ round: '' }) };
    await Promise.all([
      this.deps.sink.send(waitingTopicName(config, job.destinationId), { key, value: job.body, headers }),
      this.deps.sink.send(config.kafka.topics.attempts, {
        key,
        value: noRequestRecord(job, 'waiting', now, waitingFor),
      }),
    ]);
    this.deps.metrics.orderingWaiting.inc({ destination: job.destinationId });
    await this.deps.store.put(job.destinationId, key, parked(q, job.messageId));
  }

  /** Writes a moved queue, and wakes the idle waiting records of its partition when it freed something. */
  async #moved(
    id: string,
    key: string,
    partition: number,
    before: KeyQueue | undefined,
    after: KeyQueue,
  ): Promise<void> {
    if (after === before) return;
    await this.deps.store.put(id, key, after);
    const freed = before?.head !== after.head || (before?.queue.length ?? 0) !== after.queue.length;
    if (freed && after.head === undefined) this.#progressed(id, partition);
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
      const timer = setTimeout(() => done(false), this.deps.idleWaitMs ?? ORDERING_IDLE_WAIT_MS);
      const done = (progressed: boolean) => {
        clearTimeout(timer);
        set.delete(wake);
        resolve(progressed && !this.#closed);
      };
      const wake = () => done(true);
      set.add(wake);
    });
  }

  /** Runs `work` after every earlier step of the same destination and user. */
  #serial<T>(destinationId: string, key: string, work: () => Promise<T>): Promise<T> {
    const id = `${destinationId}\u0000${key}`;
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

function roundOf(record: ConsumedRecord): string | undefined {
  const text = headerText(record.headers, ORDERING_HEADER);
  if (text === undefined) return undefined;
  try {
    const round = (JSON.parse(text) as { round?: unknown }).round;
    return typeof round === 'string' ? round : undefined;
  } catch {
    return undefined;
  }
}
