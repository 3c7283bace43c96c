import { randomBytes } from 'node:crypto';
import type { SluiceConfig } from '@sluice/config';
import { noRequestRecord } from '@sluice/envelope';
import { SideRecordRefusedError, type RecordSink } from '@sluice/kafka';
import type { DeliveryJob } from '../intake/delivery-job.ts';
import { isInfrastructureFailure } from '../intake/infrastructure-errors.ts';
import { parkedHeaders } from '../parking/parked-job.ts';
import { ORDERING_HEADER } from '../service/constants.ts';
import type { DelivererMetrics } from '../service/metrics.ts';
import type { OrderingStore } from './ordering-store.ts';
import { chainId, type QueueAt } from './queue-at.ts';
import { parked, tailFull, trimTail, type QueueState } from './queue-rules.ts';
import { orderingHeader } from './waiting-header.ts';
import type { WaitingTopics } from './waiting-topics.ts';

/**
 * A user's parks for one destination, as this process writes them: those whose waiting records
 * are being written (by place, in order), and the places whose records it wrote (they leave the
 * queue's `tail`).
 */
interface ParkLane {
  unwritten: Map<number, Promise<void>>;
  written: Set<number>;
}

/** What `ParkWrites` writes with: the config (topic names), the waiting topics, the sink, the queues, the waiting counter and the clock. */
export interface ParkWritesDeps {
  config: () => SluiceConfig;
  /** A destination's waiting topic, once it exists (`WaitingTopics`: created when the destination is ordered). */
  waitingTopics: Pick<WaitingTopics, 'ensure'>;
  sink: RecordSink;
  store: Pick<OrderingStore, 'get' | 'put'>;
  metrics: Pick<DelivererMetrics, 'orderingWaiting'>;
  now: () => number;
}

/** When a parked job's window started (`accepted`) and its place in its user's queue (its number in the run `epoch`). */
export type ParkPlace = { accepted: number | undefined; seq: number; epoch: string | undefined };

/**
 * The writes of parks: a job's place in its user's queue, its state record, its waiting record (or
 * a gap record) and its `waiting` attempt record; per chain, its parks being written and those this
 * process wrote (`ParkLane`), so the queue's tail is trimmed and never pushed past a park whose
 * record may be missing.
 */
export class ParkWrites {
  readonly #lanes = new Map<string, ParkLane>();
  readonly #deps: ParkWritesDeps;
  constructor(deps: ParkWritesDeps) {
    this.#deps = deps;
  }

  /**
   * Parks the job: its place in the queue is set at once, so the user's next step goes on; its
   * state record leaves with the other puts of the tick (`OrderingStore.put`), then its waiting
   * record and its `waiting` attempt record. Resolves once parked. Until its waiting record is
   * written the park is in the queue's `tail`: read again after a crash, the job writes its record
   * at its place (`rewrite`), so no place stays without a record. A waiting record Kafka refuses
   * for its content leaves a gap record at its place (the queue moves past it) and fails the park:
   * the event goes to `sluice.rejected`.
   */
  park(
    at: QueueAt,
    job: DeliveryJob,
    how: { accepted: number | undefined; q: QueueState | undefined; behind: string | undefined },
  ): Promise<void> {
    const { destination, key, partition } = at;
    const lane = this.#lane(chainId(destination.id, key));
    const q = trimTail(how.q, (seq) => lane.written.has(seq));
    for (const seq of lane.written) if (seq < (q?.tail?.from ?? Number.POSITIVE_INFINITY)) lane.written.delete(seq);
    const event = {
      messageId: job.messageId,
      bytes: job.body.length,
      epoch: randomBytes(6).toString('base64url'),
      ...(how.behind && { behind: how.behind }),
    };
    const { state, seq } = parked(q, event);
    const place: ParkPlace = { accepted: how.accepted, seq, epoch: state.epoch };
    const stateWritten = this.#deps.store.put({ destinationId: destination.id, key, partition }, state);
    const done = stateWritten
      .then(() => this.#writeParked(job, { ...place, head: state.head ?? '' }))
      .then(
        () => {
          lane.written.add(seq);
          this.#deps.metrics.orderingWaiting.inc({ destination: destination.id });
        },
        async (err: unknown) => {
          if (isInfrastructureFailure(err)) throw err;
          await this.#writeGap(job, place);
          lane.written.add(seq);
          throw err;
        },
      )
      .finally(() => {
        lane.unwritten.delete(seq);
        this.dropLane(at);
      });
    lane.unwritten.set(seq, done);
    return done;
  }

  /**
   * A park read again whose waiting record may be missing: written at its place. One still being
   * written by this process (the same message id again) is left to that park.
   */
  async rewrite(at: QueueAt, job: DeliveryJob, how: ParkPlace): Promise<void> {
    const lane = this.#lane(chainId(at.destination.id, at.key));
    if (lane.unwritten.has(how.seq)) return;
    await this.#writeWaiting(job, how);
    lane.written.add(how.seq);
  }

  /**
   * Waits, in the user's chain, while the queue's tail is full (`tailFull`, the parks this process
   * wrote trimmed off) and its oldest park is still being written here, so a park never pushes out
   * one whose record may be missing. An oldest park from before this start is pushed out by the
   * next park (`parked`): its event was read again and wrote its record, or was committed with it
   * (docs/reference/ordering.md). True when it waited (the queue may have been trimmed meanwhile).
   */
  async roomInTail(at: QueueAt): Promise<boolean> {
    const lane = this.#lanes.get(chainId(at.destination.id, at.key));
    let waited = false;
    for (;;) {
      const q = lane && trimTail(this.#deps.store.get(at.destination.id, at.key), (seq) => lane.written.has(seq));
      const oldest = q?.tail && tailFull(q) ? lane!.unwritten.get(q.tail.from) : undefined;
      if (oldest === undefined) return waited;
      waited = true;
      await Promise.allSettled([oldest]);
    }
  }

  /** Forgets a user's parks once none is being written and its queue has no tail left to trim (after a park, or a move of the queue). */
  dropLane(at: QueueAt): void {
    const chain = chainId(at.destination.id, at.key);
    const lane = this.#lanes.get(chain);
    if (lane && lane.unwritten.size === 0 && !this.#deps.store.get(at.destination.id, at.key)?.tail)
      this.#lanes.delete(chain);
  }

  #lane(chain: string): ParkLane {
    let lane = this.#lanes.get(chain);
    if (!lane) this.#lanes.set(chain, (lane = { unwritten: new Map(), written: new Set() }));
    return lane;
  }

  /** The waiting record and the `waiting` attempt record of a park (an attempt record Kafka refuses is counted and logged by the sink, not a failure of the park). */
  async #writeParked(job: DeliveryJob, how: ParkPlace & { head: string }): Promise<void> {
    const attempt = this.#deps.sink
      .send(this.#deps.config().kafka.topics.attempts, {
        key: job.key,
        value: noRequestRecord(job, 'waiting', this.#deps.now(), how.head),
      })
      .catch((err: unknown) => {
        if (!(err instanceof SideRecordRefusedError)) throw err;
      });
    const [waiting, written] = await Promise.allSettled([this.#writeWaiting(job, how), attempt]);
    if (waiting.status === 'rejected') throw waiting.reason;
    if (written.status === 'rejected') throw written.reason;
  }

  /** A park's place whose waiting record Kafka refused: a record with no body that the queue moves past. */
  async #writeGap(job: DeliveryJob, how: ParkPlace): Promise<void> {
    const headers = {
      ...parkedHeaders(job, how.accepted, this.#deps.now()),
      [ORDERING_HEADER]: orderingHeader('', { seq: how.seq, epoch: how.epoch, gap: true }),
    };
    const topic = await this.#deps.waitingTopics.ensure(job.destinationId);
    await this.#deps.sink.send(topic, { key: job.key, value: Buffer.alloc(0), headers });
  }

  /**
   * A job's waiting record at its place (`seq`), its window's start and its wait's start in
   * `sluice-parked`, on its destination's waiting topic (created when the destination was ordered).
   */
  async #writeWaiting(job: DeliveryJob, how: ParkPlace): Promise<void> {
    const topic = await this.#deps.waitingTopics.ensure(job.destinationId);
    const headers = {
      ...parkedHeaders(job, how.accepted, this.#deps.now()),
      [ORDERING_HEADER]: orderingHeader('', how),
    };
    await this.#deps.sink.send(topic, { key: job.key, value: job.body, headers });
  }
}
