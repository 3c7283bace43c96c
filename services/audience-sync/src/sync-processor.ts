import type { EventEnvelope, RejectedRecordInput } from '@sluice/envelope';
import type { Logger } from '@sluice/logging';
import { REJECT_ORIGIN } from './constants.ts';
import { buildIdentify } from './domain/identify.ts';
import { snakeCase } from './domain/snake-case.ts';
import type { SnapshotRead } from './adapters/snapshot-reader.ts';
import { parseSnapshot, targetId, type SyncTarget } from './domain/snapshot.ts';
import { memberRecord, parseStateRecord, syncRecord, type RawStateRecord } from './domain/state-records.ts';
import { TargetState, type LogPosition, type MemberChange } from './domain/target-state.ts';
import type { AudienceSyncMetrics } from './metrics.ts';

/** Where emitted identifies go (`sluice.events`, through the codec). */
export interface EventSink {
  emit(events: EventEnvelope[]): Promise<void>;
}

/** Where membership state goes (`sluice.audience-state`). */
export interface StateSink {
  write(records: RawStateRecord[]): Promise<void>;
}

/** Where unusable snapshot records go (`sluice.rejected`). */
export interface RejectSink {
  reject(record: RejectedRecordInput): Promise<void>;
}

export interface SyncProcessorDeps {
  events: EventSink;
  state: StateSink;
  rejects: RejectSink;
  metrics: AudienceSyncMetrics;
  logger: Logger;
  isKnownSource: (sourceId: string) => boolean;
  /** Reads a record value of `sluice.audiences` (plain JSON or the Confluent wire format). */
  readSnapshot: (value: Buffer | null) => Promise<SnapshotRead>;
  batchSize: number;
  now: () => number;
}

/** A snapshot record as read from `sluice.audiences`. */
export interface SnapshotRecord extends LogPosition {
  topic: string;
  key: Buffer | null;
  value: Buffer | null;
}

/**
 * Turns snapshot chunks into identify events (docs/reference/audiences.md). The order at `final` is what makes a crash
 * harmless (docs/audiences.md): 1) every identify of the sync is acknowledged on the events topic,
 * 2) then the new membership and the sync marker are written to the state topic, 3) only then may
 * the consumer commit past the sync's chunks (`heldOffset`). A crash before 3 replays the sync from
 * its first chunk and re-emits the same changes with the same `messageId`s.
 */
export class SyncProcessor {
  readonly #targets = new Map<string, TargetState>();

  private readonly deps: SyncProcessorDeps;
  constructor(deps: SyncProcessorDeps) {
    this.deps = deps;
  }

  /** Applies one record of `sluice.audience-state` while rebuilding. */
  loadState(key: string, value: string | null): void {
    const record = parseStateRecord(key, value);
    if (!record) return;
    const state = this.#state({ kind: record.kind, sourceId: record.sourceId, name: record.name });
    if (record.type === 'member') state.loadMember(record.userId, record.value);
    else state.completed = record.completed;
  }

  /** Handles one snapshot chunk. Throws only when Kafka fails (fatal: the service restarts and replays). */
  async handle(record: SnapshotRecord, heartbeat: () => Promise<void>): Promise<void> {
    const { metrics, logger } = this.deps;
    const from = `${record.topic}/${record.partition}/${record.offset}`;
    const read = await this.deps.readSnapshot(record.value ?? null);
    if (!read.ok) return this.#reject(record, read.code, read.message, from);
    const value = read.value;
    const parsed = parseSnapshot(value, this.deps.isKnownSource);
    if (!parsed.ok)
      return this.#reject(
        record,
        parsed.error.code,
        parsed.error.message,
        from,
        (value as { sourceId?: unknown })?.sourceId,
      );
    const { chunk } = parsed;
    const state = this.#state(chunk.target);
    // Only the position travels on: the record holds the chunk's bytes, which must not outlive it.
    const at: LogPosition = { partition: record.partition, offset: record.offset };
    const verdict = state.applyChunk(chunk, at);
    if (verdict.action === 'ignored') {
      metrics.chunksIgnored.inc({ reason: verdict.reason });
      return;
    }
    metrics.membersDiffed.inc(
      { kind: chunk.kind },
      chunk.kind === 'audience' ? chunk.members.length : chunk.values.length,
    );
    if (verdict.abandoned !== undefined) {
      metrics.syncsAbandoned.inc({ kind: chunk.kind });
      logger.warn(
        { target: chunk.target, abandoned: verdict.abandoned, syncId: chunk.syncId },
        'a newer sync started before the previous one completed; dropping the unfinished one',
      );
    }
    if (verdict.complete) await this.#complete(state, at, heartbeat);
  }

  /**
   * The offset below which the partition's records are fully handled: the first chunk of the
   * earliest sync still in progress there, or undefined when none is (commit past the last record).
   */
  heldOffset(partition: number): number | undefined {
    let lowest: number | undefined;
    for (const state of this.#targets.values()) {
      const current = state.current;
      if (current && current.partition === partition && (lowest === undefined || current.offset < lowest))
        lowest = current.offset;
    }
    return lowest;
  }

  /** Bytes of all membership indexes (the "compact state index"). */
  get indexBytes(): number {
    let bytes = 0;
    for (const state of this.#targets.values()) bytes += state.index.bytes;
    return bytes;
  }

  async #complete(state: TargetState, at: LogPosition, heartbeat: () => Promise<void>): Promise<void> {
    const { target } = state;
    const { syncId } = state.current!;
    const now = new Date(this.deps.now()).toISOString();
    const counts = new Map<string, number>();
    await this.#inBatches(
      state.changes(),
      heartbeat,
      (change) => {
        const kind = changeKind(target, change);
        counts.set(kind, (counts.get(kind) ?? 0) + 1);
        return buildIdentify(target, change.userId, change.value, syncId, now);
      },
      (batch) => this.deps.events.emit(batch),
    );
    await this.#inBatches(
      state.changes(),
      heartbeat,
      (change) => memberRecord(target, change),
      (batch) => this.deps.state.write(batch),
    );
    await this.deps.state.write([syncRecord(target, { syncId, partition: at.partition, offset: at.offset })]);
    state.complete(at);
    for (const [change, n] of counts) this.deps.metrics.identifiesEmitted.inc({ kind: target.kind, change }, n);
    this.deps.metrics.syncsCompleted.inc({ kind: target.kind });
    this.deps.metrics.stateIndexBytes.set(this.indexBytes);
    this.deps.logger.info(
      { target, syncId, changes: Object.fromEntries(counts), members: state.index.size },
      'sync completed',
    );
  }

  async #inBatches<T>(
    changes: Iterable<MemberChange>,
    heartbeat: () => Promise<void>,
    map: (c: MemberChange) => T,
    send: (batch: T[]) => Promise<void>,
  ): Promise<void> {
    let batch: T[] = [];
    for (const change of changes) {
      batch.push(map(change));
      if (batch.length >= this.deps.batchSize) {
        await send(batch);
        await heartbeat();
        batch = [];
      }
    }
    if (batch.length > 0) await send(batch);
  }

  #state(target: Omit<SyncTarget, 'property'> & { property?: string }): TargetState {
    const id = targetId(target);
    let state = this.#targets.get(id);
    if (!state) {
      state = new TargetState({ ...target, property: target.property ?? snakeCase(target.name) });
      this.#targets.set(id, state);
    }
    return state;
  }

  async #reject(
    record: SnapshotRecord,
    code: string,
    message: string,
    from: string,
    sourceId?: unknown,
  ): Promise<void> {
    this.deps.metrics.snapshotsRejected.inc({ code, via: 'topic' });
    await this.deps.rejects.reject({
      code,
      message,
      origin: REJECT_ORIGIN,
      value: record.value,
      key: record.key?.toString('utf8') ?? null,
      from,
      ...(typeof sourceId === 'string' && { sourceId }),
    });
  }
}

function changeKind(target: SyncTarget, change: MemberChange): string {
  if (target.kind === 'audience') return change.value === true ? 'joined' : 'left';
  return change.value === null ? 'removed' : 'changed';
}
