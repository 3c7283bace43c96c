import ipaddr from 'ipaddr.js';
import { BATCH_BOUNDS, OPERATOR_EVENTS_DESTINATION_ID } from './constants.ts';
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
 * Each destination has topics named after its id (`sluice.parked.<id>`, `sluice.waiting.<id>`), and
 * Kafka takes `.` and `_` in a topic name for the same character (their metric names would collide:
 * it refuses to create the second of two such topics). Two ids that differ only there would share,
 * or fight over, one topic: refused, naming both. Ids are otherwise used as they are, so the
 * topics of existing destinations keep their names.
 */
function checkTopicIds(ids: string[]): void {
  const seen = new Map<string, number>();
  const reserved = OPERATOR_EVENTS_DESTINATION_ID.replaceAll('.', '_');
  ids.forEach((id, i) => {
    const folded = id.replaceAll('.', '_');
    if (folded === reserved)
      throw new ConfigError(
        `destinations[${i}].id`,
        `${JSON.stringify(id)} is reserved: operator events' attempt records carry ${JSON.stringify(OPERATOR_EVENTS_DESTINATION_ID)}`,
      );
    const first = seen.get(folded);
    if (first !== undefined)
      throw new ConfigError(
        `destinations[${i}].id`,
        `${JSON.stringify(id)} and destinations[${first}].id ${JSON.stringify(ids[first])} would name the same ` +
          "Kafka topics (Kafka takes '.' and '_' in topic names for the same character): rename one",
      );
    seen.set(folded, i);
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
  checkTopicIds(raw.destinations.map((d) => d.id));
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
