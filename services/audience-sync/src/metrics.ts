import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * Every metric of audience-sync (docs/reference/observability.md "audience identifies emitted"), on the service's
 * registry.
 */
export interface AudienceSyncMetrics {
  identifiesEmitted: Counter<'kind' | 'change'>;
  syncsCompleted: Counter<'kind'>;
  syncsAbandoned: Counter<'kind'>;
  membersDiffed: Counter<'kind'>;
  snapshotsRejected: Counter<'code' | 'via'>;
  chunksIgnored: Counter<'reason'>;
  stateIndexBytes: Gauge;
  active: Gauge;
}

export function createMetrics(registry: Registry): AudienceSyncMetrics {
  const registers = [registry];
  return {
    identifiesEmitted: new Counter({
      name: 'sluice_audience_identifies_emitted_total',
      help: 'Identify events emitted onto the events topic, by kind (audience|trait) and change (joined|left|changed|removed)',
      labelNames: ['kind', 'change'],
      registers,
    }),
    syncsCompleted: new Counter({
      name: 'sluice_audience_syncs_completed_total',
      help: 'Syncs completed (final chunk handled)',
      labelNames: ['kind'],
      registers,
    }),
    syncsAbandoned: new Counter({
      name: 'sluice_audience_syncs_abandoned_total',
      help: 'Unfinished syncs dropped because a newer sync of the same target started',
      labelNames: ['kind'],
      registers,
    }),
    membersDiffed: new Counter({
      name: 'sluice_audience_members_diffed_total',
      help: 'Members (or trait values) read from snapshot chunks',
      labelNames: ['kind'],
      registers,
    }),
    snapshotsRejected: new Counter({
      name: 'sluice_audience_snapshots_rejected_total',
      help: 'Snapshot chunks rejected, by code and intake (http|topic)',
      labelNames: ['code', 'via'],
      registers,
    }),
    chunksIgnored: new Counter({
      name: 'sluice_audience_chunks_ignored_total',
      help: 'Chunks of already completed syncs (resends, replays) that were ignored',
      labelNames: ['reason'],
      registers,
    }),
    stateIndexBytes: new Gauge({
      name: 'sluice_audience_state_index_bytes',
      help: 'Bytes held by the in-memory membership indexes',
      registers,
    }),
    active: new Gauge({
      name: 'sluice_audience_active',
      help: '1 on the instance that owns the snapshot partitions and consumes them, 0 on a standby',
      registers,
    }),
  };
}
