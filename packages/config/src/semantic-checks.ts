import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';
import { BATCH_BOUNDS, OPERATOR_EVENTS_DESTINATION_ID } from './constants.ts';
import { parseDuration } from './duration.ts';
import { ConfigError } from './errors.ts';
import { subField } from './field-path.ts';
import type { RawConfig } from './schema.ts';

type RawDestination = RawConfig['destinations'][number];

function checkUnique(field: string, ids: string[]): void {
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (seen.has(id)) throw new ConfigError(`${field}[${i}].id`, `duplicate id ${JSON.stringify(id)}`);
    seen.add(id);
  });
}

/** An id as Kafka sees it in a topic name: `.` and `_` are one character to it. */
const topicFolded = (id: string) => id.replaceAll('.', '_');

/** A destination id already taken, and how an error names it (`destinations[0].id "a_b"`). */
export interface TakenId {
  id: string;
  label: string;
}

/**
 * Each destination has topics named after its id (`sluice.parked.<id>`, `sluice.waiting.<id>`), and
 * Kafka takes `.` and `_` in a topic name for the same character (their metric names would collide:
 * it refuses to create the second of two such topics). An id that differs from a taken one only
 * there would share, or fight over, one topic: refused, naming both. Ids are otherwise used as
 * they are, so the topics of existing destinations keep their names.
 */
export function checkTopicId(field: string, id: string, taken: ReadonlyMap<string, TakenId>): void {
  if (topicFolded(id) === topicFolded(OPERATOR_EVENTS_DESTINATION_ID))
    throw new ConfigError(
      field,
      `${JSON.stringify(id)} is reserved: operator events' attempt records carry ${JSON.stringify(OPERATOR_EVENTS_DESTINATION_ID)}`,
    );
  const first = taken.get(topicFolded(id));
  if (first !== undefined)
    throw new ConfigError(
      field,
      `${JSON.stringify(id)} and ${first.label} ${JSON.stringify(first.id)} would name the same ` +
        "Kafka topics (Kafka takes '.' and '_' in topic names for the same character): rename one",
    );
}

/**
 * Destination ids already taken, by the form Kafka gives them in topic names: built once and added
 * to, so checking many destinations against each other (the catalog's merge with the file) costs
 * one lookup each rather than a pass over every id.
 */
export class DestinationIds {
  readonly #taken = new Map<string, TakenId>();

  constructor(ids: Iterable<string> = []) {
    for (const id of ids) this.add(id);
  }

  /** Takes `id`; of two ids Kafka takes for one topic name, errors name the later one added. */
  add(id: string): void {
    this.#taken.set(topicFolded(id), { id, label: 'destination' });
  }

  /** Throws `ConfigError` at `field` when `id` is reserved or names the topics of a taken id (`checkTopicId`). */
  check(field: string, id: string): void {
    checkTopicId(field, id, this.#taken);
  }
}

/**
 * The sources a destination may name: their ids, or their ids with the tenant of each (then a
 * destination may name only sources of its own tenant, docs/reference/tenants.md).
 */
export type SourcesInForce = ReadonlySet<string> | ReadonlyMap<string, string>;

/**
 * The rules the JSON Schema cannot express for one destination, alone: its sources are known
 * (unless `sources` is undefined: not checked) and of its tenant (when `sources` gives tenants),
 * its batch wait within bounds. Fields are named below `base` (`subField`).
 */
export function checkDestination(dest: RawDestination, base: string, sources: SourcesInForce | undefined): void {
  dest.sourceIds.forEach((id, i) => {
    if (sources === undefined) return;
    const field = subField(base, `sourceIds[${i}]`);
    if (!sources.has(id)) throw new ConfigError(field, `unknown source ${JSON.stringify(id)}`);
    const tenant = sources instanceof Map ? sources.get(id) : undefined;
    if (tenant !== undefined && tenant !== dest.tenant)
      throw new ConfigError(
        field,
        `source ${JSON.stringify(id)} belongs to tenant ${JSON.stringify(tenant)}, the destination to ${JSON.stringify(dest.tenant)}`,
      );
  });
  if (dest.batch !== undefined) {
    const { min, max } = BATCH_BOUNDS.maxWaitMs;
    const waitMs = parseDuration(dest.batch.maxWait);
    if (waitMs < min || waitMs > max)
      throw new ConfigError(
        subField(base, 'batch.maxWait'),
        `must be from ${min}ms to ${max / 1_000}s, got ${waitMs}ms`,
      );
  }
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
  if (raw.runtimeDestinations !== undefined)
    checkUnique(
      'runtimeDestinations.keyring',
      raw.runtimeDestinations.keyring.map((k) => k.id),
    );
  const taken = new Map<string, TakenId>();
  raw.destinations.forEach((dest, d) => {
    const field = `destinations[${d}].id`;
    checkTopicId(field, dest.id, taken);
    taken.set(topicFolded(dest.id), { id: dest.id, label: field });
  });
  const sources = new Map(raw.sources.map((s) => [s.id, s.tenant]));
  raw.destinations.forEach((dest, d) => {
    checkDestination(dest, `destinations[${d}]`, sources);
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
  raw.deliveryLog.trustedProxies.forEach((proxy, i) => {
    // Compiled as the delivery log compiles it (proxy-addr), so what loads is what it trusts.
    try {
      proxyaddr.compile(proxy);
    } catch {
      throw new ConfigError(
        `deliveryLog.trustedProxies[${i}]`,
        `not an address, a CIDR (address/prefix) or one of loopback, linklocal, uniquelocal: ${JSON.stringify(proxy)}`,
      );
    }
  });
}
