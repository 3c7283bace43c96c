import type { ConfigStore } from '@sluice/config';
import type { EnvelopeCodec } from '@sluice/codec';
import type { Logger } from '@sluice/logging';
import type { Tracing } from '@sluice/tracing';
import type { RateLimiter } from '../domain/rate-limiter.ts';
import type { IngestMetrics } from '../metrics.ts';
import type { LingeringSender } from './lingering-sender.ts';

/** What the HTTP API needs; injected so tests can swap the clock or id generator. */
export interface ApiDeps {
  config: ConfigStore;
  sender: LingeringSender;
  codec: EnvelopeCodec;
  metrics: IngestMetrics;
  logger: Logger;
  now: () => number;
  newId: () => string;
  rateLimiter?: RateLimiter;
  /** Spans of each tracking request and its produce (docs/reference/observability.md, "Tracing"); default off. */
  tracing?: Tracing;
}
