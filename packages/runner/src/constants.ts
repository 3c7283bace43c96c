import { fileURLToPath } from 'node:url';
import type { ServiceName } from '@sluice/service-kit';

/** The repository root (the runner starts the services from their sources there). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export type PortKey = 'ingest' | 'deliverer' | 'retry' | 'audienceSync' | 'deliveryLog';

export interface ServiceSpec {
  /** Service name, also its folder under `services/`. */
  name: ServiceName;
  /** Key in `SluiceEnv.ports`. */
  portKey: PortKey;
  /** The environment variable carrying its port (docs/reference/operating-interface.md). */
  portVar: string;
}

/** The services, in the order they are started (consumers before the producer of traffic). */
export const SERVICES: readonly ServiceSpec[] = [
  { name: 'deliverer', portKey: 'deliverer', portVar: 'DELIVERER_PORT' },
  { name: 'retry', portKey: 'retry', portVar: 'RETRY_PORT' },
  { name: 'audience-sync', portKey: 'audienceSync', portVar: 'AUDIENCE_SYNC_PORT' },
  { name: 'delivery-log', portKey: 'deliveryLog', portVar: 'DELIVERY_LOG_PORT' },
  { name: 'ingest', portKey: 'ingest', portVar: 'INGEST_PORT' },
];

/**
 * Services log at this level unless `LOG_LEVEL` is set, so the console shows the receiver's lines
 * (`LOG_LEVEL=warn npm start` or `info` shows more).
 */
export const DEFAULT_SERVICE_LOG_LEVEL = 'error';
/**
 * How long a service may take to answer 200 on `/readyz` (start-up, Kafka connect, topic creation)
 * beyond `kafka.startupTimeout`, within which a service waits out Kafka's "not yet" answers.
 */
export const READY_TIMEOUT_MS = 120_000;
export const READY_POLL_MS = 200;
/**
 * After SIGTERM a service gets this long before SIGKILL: longer than `runService`'s own 25 s hard
 * limit, so a service always gets to finish its graceful shutdown first.
 */
export const STOP_GRACE_MS = 30_000;
