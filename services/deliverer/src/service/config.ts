import type { Destination, SluiceConfig } from '@sluice/config';
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

/**
 * The origins of a destination's endpoints, parsed once per destination object: a change of the
 * catalog keeps the objects of the destinations it did not change (`mergeDestinations`), so a
 * change among 10,000 destinations parses the URLs of one, not of 30,000 endpoints.
 */
const originsOf = new WeakMap<Destination, readonly string[]>();

function destinationOrigins(d: Destination): readonly string[] {
  let origins = originsOf.get(d);
  if (!origins) {
    const parsed: string[] = [];
    for (const e of d.endpoints) {
      try {
        parsed.push(new URL(e.url).origin);
      } catch {
        // validated at load; an unparsable URL has no pool anyway
      }
    }
    origins = parsed;
    originsOf.set(d, origins);
  }
  return origins;
}

/** Origins of every configured endpoint: pools of other origins can be closed after a reload. */
export function endpointOrigins(config: SluiceConfig): Set<string> {
  const origins = new Set<string>();
  for (const d of config.destinations) for (const origin of destinationOrigins(d)) origins.add(origin);
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
