import type { ManagedConsumerBase } from '@sluice/kafka';
/** Options of the audience-sync factory, with their defaults (docs/CONVENTIONS.md). */
export interface AudienceSyncOptions {
  /** Port of the snapshot API and /metrics, /healthz, /readyz (0 picks a free one). */
  port: number;
  /** Identify (and state) records per `send` when a sync completes. Default 5,000. */
  emitBatchSize?: number;
  /** Consumer group on `sluice.audiences`. Default `<kafka.clientId>-audience-sync`. */
  groupId?: string;
  /** The consumer's group timings (session timeout, waits before running again), shrunk by tests. */
  membership?: ManagedConsumerBase['membership'];
  /** Clock, injected for tests. Default `Date.now`. */
  now?: () => number;
}

export const DEFAULT_EMIT_BATCH_SIZE = 5_000;
