import type { Condition, EventFilter, EventNames, FieldPath } from './types.ts';

/**
 * Whether `call` (the event envelope as decoded) passes `filter`: its type is one of `types`, a
 * track call's event name matches `events` (calls of other types have no event name and are not
 * judged by it), and `where` holds. A deletion notification (`type: 'delete'`) always passes: it
 * concerns whatever the destination got of the user, whichever calls those were. Pure, no
 * allocation per call; its cost is bounded by `FILTER_LIMITS` (docs/reference/filters.md).
 */
export function filterAccepts(filter: EventFilter, call: Record<string, unknown>): boolean {
  if (call.type === 'delete') return true;
  if (filter.types !== undefined && !filter.types.has(call.type as string)) return false;
  if (filter.events !== undefined && call.type === 'track' && !namesMatch(filter.events, call.event)) return false;
  return filter.where === undefined || holds(filter.where, call);
}

function namesMatch(names: EventNames, name: unknown): boolean {
  if (typeof name !== 'string') return false;
  if (names.exact.has(name)) return true;
  for (const parts of names.patterns) if (wildcardMatch(parts, name)) return true;
  return false;
}

/** `parts` are a pattern's literal text between its `*`s; each `*` matches any run of characters, none included. */
export function wildcardMatch(parts: readonly string[], s: string): boolean {
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (s.length < first.length + last.length || !s.startsWith(first) || !s.endsWith(last)) return false;
  let at = first.length;
  const end = s.length - last.length;
  for (let i = 1; i < parts.length - 1; i += 1) {
    const part = parts[i]!;
    const found = s.indexOf(part, at);
    if (found === -1 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/**
 * The value at `path`, following only the call's own properties (never its prototype: a path such
 * as `__proto__.x` finds nothing) and array elements by index; `undefined` when any step is missing.
 */
export function fieldValue(call: unknown, path: FieldPath): unknown {
  let value = call;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    if (Array.isArray(value)) {
      const index = Number(segment);
      value = Number.isInteger(index) && index >= 0 && segment === String(index) ? value[index] : undefined;
    } else {
      value = Object.hasOwn(value, segment) ? (value as Record<string, unknown>)[segment] : undefined;
    }
  }
  return value;
}

function holds(c: Condition, call: Record<string, unknown>): boolean {
  switch (c.op) {
    case 'all':
      for (const x of c.of) if (!holds(x, call)) return false;
      return true;
    case 'any':
      for (const x of c.of) if (holds(x, call)) return true;
      return false;
    case 'not':
      return !holds(c.of, call);
    case 'exists':
      return (fieldValue(call, c.path) !== undefined) === c.value;
    case 'equals':
      return fieldValue(call, c.path) === c.value;
    case 'in': {
      const v = fieldValue(call, c.path);
      return v !== undefined && c.values.has(v as never);
    }
    case 'prefix': {
      const v = fieldValue(call, c.path);
      return typeof v === 'string' && v.startsWith(c.value);
    }
    default: {
      const v = fieldValue(call, c.path);
      if (typeof v !== 'number') return false;
      if (c.op === 'gt') return v > c.value;
      if (c.op === 'gte') return v >= c.value;
      if (c.op === 'lt') return v < c.value;
      return v <= c.value;
    }
  }
}
