import type { SigningKey } from '@sluice/webhook-signature';
import type { DEFAULT_TOPICS } from './constants.ts';

/** One webhook endpoint after validation. */
export interface Endpoint {
  url: string;
  headers: Record<string, string>;
}

export interface Source {
  id: string;
  name: string;
  writeKeys: string[];
  rateLimit?: { perSecond: number; burst: number };
}

export interface Destination {
  id: string;
  name: string;
  type: 'webhooks';
  enabled: boolean;
  sourceIds: string[];
  /** The legacy `webhookUrl` first, then `webhooks[]` (docs/configuration.md); 1–5 entries. */
  endpoints: Endpoint[];
  sharedSecret?: string;
  signing: DestinationSigning;
}

/** How a destination's requests are signed (docs/configuration.md, "Signing"). */
export interface DestinationSigning {
  /** Send `X-Signature` (hex HMAC-SHA1 of the body) when an X-Signature key is active. */
  xSignature: boolean;
  /** Send `webhook-id`, `webhook-timestamp`, `webhook-signature` when a Standard Webhooks key is active. */
  standardWebhooks: boolean;
  /** `settings.sharedSecret` (no bounds) first, then `signing.xSignature.secrets`; the newest active one signs. */
  xSignatureKeys: SigningKey[];
  /** `whsec_` secrets; every active one adds a signature. */
  standardWebhooksKeys: SigningKey[];
}

export type TopicNames = { [K in keyof typeof DEFAULT_TOPICS]: string };

/** The validated configuration with secrets resolved and durations in milliseconds. */
export interface SluiceConfig {
  sources: Source[];
  destinations: Destination[];
  kafka: { clientId: string; topics: TopicNames; partitions: number; replicationFactor: number };
  ingest: {
    trustProxy: boolean;
    adminToken?: string;
    lingerMs: number;
    requestTimeoutMs: number;
    headersTimeoutMs: number;
    produceTimeoutMs: number;
  };
  delivery: {
    timeoutMs: number;
    maxInFlightPerPartition: number;
    maxInFlightPerDestination: number;
    connectionsPerEndpoint: number;
    caFile?: string;
    ssrf: { enabled: boolean; allowCidrs: string[] };
  };
  retry: { windowMs: number; scheduleMs: number[]; jitter: number; tiersMs: number[] };
  deliveryLog: {
    databaseUrl?: string;
    dataDir?: string;
    retentionMs: number;
    pruneIntervalMs: number;
    adminToken?: string;
    healthWindowMs: number;
  };
}
