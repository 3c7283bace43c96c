import { singleOwnerAssigner, type Admin, type PartitionAssigner, type RetryKafka } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import type { Consumer } from 'kafkajs';
import type { Gauge } from 'prom-client';
import {
  INITIAL_OWNERSHIP,
  ownershipConfirmed,
  ownershipOnJoin,
  ownershipOnLeave,
  sameOffsets,
  type OwnershipState,
} from '../domain/ownership.ts';

/** The state topic's log end per partition. */
export async function stateTopicEnds(admin: Admin, topic: string): Promise<Map<number, number>> {
  return new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
}

export class StaleStateError extends Error {}

interface Gate {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

function gate(): Gate {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

export interface OwnershipGuardOptions {
  admin: Admin;
  /** The snapshot consumer's group and topic. */
  groupId: string;
  topic: string;
  stateTopic: string;
  /** The state topic's log end before the state was read. */
  readUpTo: Map<number, number>;
  /** Offsets of the snapshot topic this instance's commits reached (Kafka confirmed). */
  committed: () => ReadonlyMap<number, number>;
  logger: Logger;
  active: Gauge;
  startedAt: number;
  /** How a check waits out Kafka's "not yet" answers (a check that cannot be made restarts the service); default none. */
  retry?: RetryKafka;
}

/**
 * One active audience-sync instance (docs/audiences.md): the snapshot group gives every partition
 * to one member (`assigner`); records are handled only after `ready()`, which waits for a join
 * that leaves this instance the owner with a current state. An instance that becomes the owner
 * when its state may be stale reports `fatal`, so that its restart reads the state again.
 */
export class OwnershipGuard {
  readonly assigner: PartitionAssigner;
  readonly fatal: Promise<Error>;
  #reportFatal!: (err: Error) => void;
  #state: OwnershipState = INITIAL_OWNERSHIP;
  #owner = false;
  #committedAtStart = new Map<number, number>();
  #gate = gate();
  readonly #options: OwnershipGuardOptions;

  constructor(options: OwnershipGuardOptions) {
    this.#options = options;
    this.fatal = new Promise((resolve) => (this.#reportFatal = resolve));
    this.assigner = singleOwnerAssigner(() => ({ owner: this.#owner, startedAt: options.startedAt }));
    options.active.set(0);
  }

  /** Follows the joins of the snapshot consumer. */
  watch(consumer: Consumer): void {
    // A rebalance keeps the claim: the owner rejoins as the owner and keeps the partitions, and a
    // batch in flight goes on (kafkajs rejoins once it returns). Out of the group (a crash, a stop),
    // another instance may take over meanwhile: owning again is checked against the commits.
    for (const left of [consumer.events.CRASH, consumer.events.STOP]) {
      consumer.on(left, () => {
        this.#options.active.set(0);
        this.#owner = false;
        this.#state = ownershipOnLeave(this.#state);
        // After a crash no batch is in flight: records wait for the next join's check.
        if (left === consumer.events.CRASH) this.#gate = gate();
      });
    }
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      const owns = Object.values(event.payload.memberAssignment).some((partitions) => partitions.length > 0);
      void this.#joined(owns);
    });
  }

  /** Resolves once this instance owns the partitions with a current state; rejects once it must restart. */
  ready(): Promise<void> {
    return this.#gate.promise;
  }

  async #joined(owns: boolean): Promise<void> {
    const { verdict, state } = ownershipOnJoin(this.#state, owns);
    this.#state = state;
    const current = this.#gate;
    const { logger } = this.#options;
    if (verdict === 'standby') {
      this.#owner = false;
      this.#options.active.set(0);
      logger.info('standby: another audience-sync instance owns the snapshot partitions');
      return;
    }
    this.#owner = true;
    if (verdict === 'consume' || (await this.#passes(verdict))) {
      this.#state = ownershipConfirmed(this.#state);
      this.#activate(current);
      return;
    }
    const err = new StaleStateError(
      'this instance became the audience-sync owner with a state that may be stale; restarting to read it again',
    );
    logger.warn(err.message);
    current.reject(err);
    this.#reportFatal(err);
  }

  /** The check of a verdict; false (restart) when it cannot be made. */
  async #passes(verdict: string): Promise<boolean> {
    const { admin, stateTopic, readUpTo } = this.#options;
    try {
      if (verdict === 'check-fresh') {
        const ends = await this.#retry(`list offsets of ${stateTopic}`, () => stateTopicEnds(admin, stateTopic));
        if (!sameOffsets(readUpTo, ends)) return false;
        // What the group had committed when this instance took over; its own commits go on top.
        this.#committedAtStart = await this.#groupCommitted();
        return true;
      }
      if (verdict === 'check-committed') {
        const expected = new Map([...this.#committedAtStart, ...this.#options.committed()]);
        return sameOffsets(expected, await this.#groupCommitted());
      }
    } catch (err) {
      this.#options.logger.warn({ err }, 'ownership check failed');
    }
    return false;
  }

  async #groupCommitted(): Promise<Map<number, number>> {
    const { admin, groupId, topic } = this.#options;
    const [group] = await this.#retry(`fetch the offsets of ${groupId}`, () =>
      admin.fetchOffsets({ groupId, topics: [topic] }),
    );
    const partitions = (group?.partitions ?? []).filter((p) => Number(p.offset) >= 0);
    return new Map(partitions.map((p) => [p.partition, Number(p.offset)]));
  }

  #retry<T>(operation: string, call: () => Promise<T>): Promise<T> {
    return this.#options.retry ? this.#options.retry(operation, call) : call();
  }

  #activate(current: Gate): void {
    this.#options.active.set(1);
    this.#options.logger.info('active: this instance owns the snapshot partitions');
    current.resolve();
  }
}
