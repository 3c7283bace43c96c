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

/** Every enabled webhooks destination of the event's source that the event is not turned off for. */
export function routeEvent(event: EventEnvelope, destinations: readonly Destination[]): Destination[] {
  return destinations.filter(
    (d) =>
      d.enabled &&
      d.type === 'webhooks' &&
      d.sourceIds.includes(event.sourceId) &&
      integrationEnabled(event.integrations, d),
  );
}
