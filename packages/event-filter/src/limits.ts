/**
 * The bounds a destination's `filter` is held to at load (docs/reference/filters.md, "Limits"): they
 * bound what one event's check can cost, whatever the config says.
 */
export const FILTER_LIMITS = {
  /** Leaf conditions (`equals`, `in`, `exists`, `prefix`, `gt`…) in one `where`. */
  conditions: 32,
  /** Nesting of `all` / `any` / `not`: `where` itself is depth 1. */
  depth: 6,
  /** Values of one `in`. */
  inValues: 256,
  /** Names of `events` (exact names and patterns together). */
  eventNames: 256,
  /**
   * Names with `*` among them: matching one looks through the event name (V8's substring search,
   * linear in its length), so their number bounds what a long hostile event name costs.
   */
  patterns: 32,
  /** `*` wildcards in one event-name pattern. */
  wildcards: 4,
  /** Characters of a string value, a prefix, an event name or a field path. */
  stringLength: 256,
  /** Dot-separated segments of a field path. */
  pathSegments: 8,
} as const;
