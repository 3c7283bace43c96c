import type { SluiceConfig } from '@sluice/config';
import { AddressPolicy } from '@sluice/webhook';
import type { PoolSettings } from '../transport/webhook-client.ts';
import type { WebhookThreadSettings } from '../transport/webhook-thread.ts';

/** The consumer group of the deliverer, shared by all its replicas. */
export function delivererGroupId(config: SluiceConfig): string {
  return `${config.kafka.clientId}.deliverer`;
}

/** The consumer group reading every destination's parked topic (docs/deliverer.md "Pausing"). */
export function parkedGroupId(config: SluiceConfig): string {
  return `${delivererGroupId(config)}.parked`;
}

/** The SSRF policy of `delivery.ssrf` (CIDRs were validated with the config). */
export function addressPolicy(config: SluiceConfig): AddressPolicy {
  return new AddressPolicy(config.delivery.ssrf);
}

export function poolSettings(config: SluiceConfig): PoolSettings {
  return {
    connections: config.delivery.connectionsPerEndpoint,
    ...(config.delivery.caFile !== undefined && { caFile: config.delivery.caFile }),
  };
}

/** Origins of every configured endpoint: pools of other origins can be closed after a reload. */
export function endpointOrigins(config: SluiceConfig): Set<string> {
  const origins = new Set<string>();
  for (const d of config.destinations) {
    for (const e of d.endpoints) {
      try {
        origins.add(new URL(e.url).origin);
      } catch {
        // validated at load; an unparsable URL has no pool anyway
      }
    }
  }
  return origins;
}

/** What the webhook thread needs of the config (sent at start and after every reload). */
export function webhookThreadSettings(config: SluiceConfig): WebhookThreadSettings {
  return {
    pool: poolSettings(config),
    ssrf: { enabled: config.delivery.ssrf.enabled, allowCidrs: [...config.delivery.ssrf.allowCidrs] },
    origins: [...endpointOrigins(config)],
  };
}
