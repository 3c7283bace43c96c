import { singleOwnerAssigner, type Admin, type PartitionAssigner } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';
import type { Consumer } from 'kafkajs';
import type { Gauge } from 'prom-client';
import { INITIAL_OWNERSHIP, ownershipOnJoin, stateUnchanged, type OwnershipState } from '../domain/ownership.ts';

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
  readonly #gate = gate();
  readonly #options: { admin: Admin; stateTopic: string; readUpTo: Map<number, number>; logger: Logger; active: Gauge };

  constructor(options: {
    admin: Admin;
    stateTopic: string;
    readUpTo: Map<number, number>;
    logger: Logger;
    active: Gauge;
    startedAt: number;
  }) {
    this.#options = options;
    this.fatal = new Promise((resolve) => (this.#reportFatal = resolve));
    this.assigner = singleOwnerAssigner(() => ({ owner: this.#owner, startedAt: options.startedAt }));
    options.active.set(0);
  }

  /** Follows the joins of the snapshot consumer. */
  watch(consumer: Consumer): void {
    // A rebalance keeps the claim: the owner rejoins as the owner and keeps the partitions, and a
    // batch in flight goes on (kafkajs rejoins once it returns). Out of the group (a crash, a stop),
    // another instance may take over and write state meanwhile: owning again then means a restart.
    for (const left of [consumer.events.CRASH, consumer.events.STOP]) {
      consumer.on(left, () => {
        this.#options.active.set(0);
        this.#owner = false;
        this.#state = { ...this.#state, standbySinceOwned: this.#state.everOwned };
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
    if (verdict === 'check-fresh') {
      const now = await stateTopicEnds(this.#options.admin, this.#options.stateTopic).catch(() => undefined);
      if (now && stateUnchanged(this.#options.readUpTo, now)) {
        this.#state = { ...this.#state, everOwned: true };
        this.#activate(current);
        return;
      }
    }
    if (verdict === 'consume') {
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

  #activate(current: Gate): void {
    this.#options.active.set(1);
    this.#options.logger.info('active: this instance owns the snapshot partitions');
    current.resolve();
  }
}
