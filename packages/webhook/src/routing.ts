import type { Destination } from '@sluice/config';
import type { EventEnvelope } from '@sluice/envelope';

/** The integration name Segment-style callers use for this destination type (docs/reference/routing.md). */
export const WEBHOOKS_INTEGRATION = 'Webhooks';

/**
 * Whether the call's `integrations` object lets it reach `destination` (docs/reference/routing.md). Keys are
 * case-sensitive. The most specific explicit setting wins: the destination's id, then its name,
 * then `Webhooks`; without one, `All: false` turns it off. Any value other than `false` (for
 * example a settings object) counts as on.
 */
export function integrationEnabled(
  integrations: Record<string, unknown> | undefined,
  destination: Destination,
): boolean {
  if (!integrations) return true;
  for (const key of [destination.id, destination.name, WEBHOOKS_INTEGRATION]) {
    if (Object.hasOwn(integrations, key) && integrations[key] !== undefined) return integrations[key] !== false;
  }
  return integrations.All !== false;
}

/**
 * The enabled webhooks destinations of each source, in config order, per destinations list: a
 * config in force keeps one list until a reload or a catalog change replaces it, so the index is
 * built once per list (O(destinations)) and an event's routing then costs what its source's
 * destinations cost, however many destinations other sources have. Held weakly: a list no longer
 * in force is collected with its index.
 */
const bySource = new WeakMap<readonly Destination[], Map<string, Destination[]>>();

function sourceIndex(destinations: readonly Destination[]): Map<string, Destination[]> {
  let index = bySource.get(destinations);
  if (index) return index;
  index = new Map();
  for (const d of destinations) {
    if (!d.enabled || d.type !== 'webhooks') continue;
    for (const sourceId of new Set(d.sourceIds)) {
      const list = index.get(sourceId);
      if (list) list.push(d);
      else index.set(sourceId, [d]);
    }
  }
  bySource.set(destinations, index);
  return index;
}

/** Every enabled webhooks destination of the event's source that the event is not turned off for, in config order. */
export function routeEvent(event: EventEnvelope, destinations: readonly Destination[]): Destination[] {
  const ofSource = sourceIndex(destinations).get(event.sourceId);
  if (!ofSource) return [];
  return ofSource.filter((d) => integrationEnabled(event.integrations, d));
}
