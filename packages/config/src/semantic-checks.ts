import ipaddr from 'ipaddr.js';
import { BATCH_BOUNDS } from './constants.ts';
import { parseDuration } from './duration.ts';
import { ConfigError } from './errors.ts';
import type { RawConfig } from './schema.ts';

function checkUnique(field: string, ids: string[]): void {
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (seen.has(id)) throw new ConfigError(`${field}[${i}].id`, `duplicate id ${JSON.stringify(id)}`);
    seen.add(id);
  });
}

/**
 * Rules the JSON Schema cannot express (docs/configuration.md). Throws the first `ConfigError` found.
 * Endpoints are checked when their secrets are resolved (`resolveEndpoints`).
 */
export function checkSemantics(raw: RawConfig): void {
  checkUnique(
    'sources',
    raw.sources.map((s) => s.id),
  );
  checkUnique(
    'destinations',
    raw.destinations.map((d) => d.id),
  );
  const sourceIds = new Set(raw.sources.map((s) => s.id));
  raw.destinations.forEach((dest, d) => {
    const base = `destinations[${d}]`;
    dest.sourceIds.forEach((id, i) => {
      if (!sourceIds.has(id)) throw new ConfigError(`${base}.sourceIds[${i}]`, `unknown source ${JSON.stringify(id)}`);
    });
    if (dest.batch !== undefined) {
      const { min, max } = BATCH_BOUNDS.maxWaitMs;
      const waitMs = parseDuration(dest.batch.maxWait);
      if (waitMs < min || waitMs > max)
        throw new ConfigError(`${base}.batch.maxWait`, `must be from ${min}ms to ${max / 1_000}s, got ${waitMs}ms`);
    }
  });
  raw.delivery.ssrf.allowCidrs.forEach((cidr, i) => {
    // Parsed as the deliverer parses it: an address plus a prefix length within its family's bits.
    try {
      ipaddr.parseCIDR(cidr);
    } catch {
      throw new ConfigError(
        `delivery.ssrf.allowCidrs[${i}]`,
        `not a CIDR (address/prefix, prefix ≤ 32 for IPv4, ≤ 128 for IPv6): ${JSON.stringify(cidr)}`,
      );
    }
  });
}
