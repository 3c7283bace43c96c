import { parseFilter, type EventFilter } from '@sluice/event-filter';
import { ConfigError } from './errors.ts';

/** A destination's `filter`, validated and ready to evaluate; a refused one names its field. */
export function resolveFilter(raw: unknown, field: string): EventFilter {
  const parsed = parseFilter(raw, field);
  if (!parsed.ok) throw new ConfigError(parsed.field, parsed.problem);
  return parsed.filter;
}
