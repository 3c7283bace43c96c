import { CALL_TYPES } from '@sluice/envelope';
import { FILTER_LIMITS as L } from './limits.ts';
import {
  OPERATORS,
  type Comparison,
  type Condition,
  type EventFilter,
  type EventNames,
  type FilterProblem,
  type Operator,
  type Scalar,
} from './types.ts';

/** Thrown inside the parser only: `parseFilter` turns it into its result. */
class Refused extends Error {
  readonly field: string;
  readonly problem: string;
  constructor(field: string, problem: string) {
    super(`${field}: ${problem}`);
    this.field = field;
    this.problem = problem;
  }
}

const GROUPS = ['all', 'any', 'not'] as const;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const shortString = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= L.stringLength;
const STRING_RULE = `must be a non-empty string of at most ${L.stringLength} characters`;

/**
 * Validates a destination's `filter` as written in the config (docs/reference/filters.md) and
 * returns it ready to evaluate, or the first problem found, naming its field under `base`
 * (`destinations[0].filter.where.all[2].gte: must be a number`). Nothing of the input becomes code
 * or a regular expression; every limit of `FILTER_LIMITS` is checked.
 */
export function parseFilter(
  input: unknown,
  base: string,
): { ok: true; filter: EventFilter } | ({ ok: false } & FilterProblem) {
  try {
    return { ok: true, filter: filter(input, base) };
  } catch (err) {
    if (err instanceof Refused) return { ok: false, field: err.field, problem: err.problem };
    throw err;
  }
}

function filter(input: unknown, base: string): EventFilter {
  if (!isObject(input)) throw new Refused(base, 'must be an object with types, events and/or where');
  known(input, base, ['types', 'events', 'where']);
  const out: EventFilter = {};
  if (input.types !== undefined) out.types = types(input.types, `${base}.types`);
  if (input.events !== undefined) out.events = eventNames(input.events, `${base}.events`);
  if (input.where !== undefined) {
    const count = { conditions: 0 };
    out.where = condition(input.where, `${base}.where`, 1, count);
  }
  if (Object.keys(out).length === 0) throw new Refused(base, 'must set at least one of types, events, where');
  return out;
}

function known(input: Record<string, unknown>, base: string, keys: readonly string[]): void {
  for (const key of Object.keys(input))
    if (!keys.includes(key)) throw new Refused(`${base}.${key}`, 'is not a known setting');
}

function list(input: unknown, field: string, max: number): unknown[] {
  if (!Array.isArray(input) || input.length === 0) throw new Refused(field, 'must be a non-empty list');
  if (input.length > max) throw new Refused(field, `must have at most ${max} entries, got ${input.length}`);
  return input;
}

function types(input: unknown, field: string): ReadonlySet<string> {
  const values = list(input, field, CALL_TYPES.length);
  values.forEach((t, i) => {
    if (!(CALL_TYPES as readonly unknown[]).includes(t))
      throw new Refused(`${field}[${i}]`, `must be one of ${CALL_TYPES.join(', ')}`);
  });
  return new Set(values as string[]);
}

function eventNames(input: unknown, field: string): EventNames {
  const exact = new Set<string>();
  const patterns: string[][] = [];
  list(input, field, L.eventNames).forEach((name, i) => {
    if (!shortString(name)) throw new Refused(`${field}[${i}]`, STRING_RULE);
    const parts = name.split('*');
    if (parts.length === 1) exact.add(name);
    else if (parts.length - 1 > L.wildcards)
      throw new Refused(`${field}[${i}]`, `must have at most ${L.wildcards} * wildcards`);
    else if (patterns.length === L.patterns)
      throw new Refused(`${field}[${i}]`, `is one name with * more than the ${L.patterns} allowed`);
    else patterns.push(parts);
  });
  return { exact, patterns };
}

function condition(input: unknown, field: string, depth: number, count: { conditions: number }): Condition {
  if (depth > L.depth) throw new Refused(field, `nests deeper than ${L.depth} levels`);
  if (!isObject(input))
    throw new Refused(field, 'must be a condition object (all, any, not, or field with one operator)');
  const group = GROUPS.find((g) => Object.hasOwn(input, g));
  if (group !== undefined) {
    known(input, field, [group]);
    const at = `${field}.${group}`;
    if (group === 'not') return { op: 'not', of: condition(input.not, at, depth + 1, count) };
    const of = list(input[group], at, L.conditions).map((c, i) => condition(c, `${at}[${i}]`, depth + 1, count));
    return { op: group, of };
  }
  count.conditions += 1;
  if (count.conditions > L.conditions)
    throw new Refused(field, `is one condition more than the ${L.conditions} allowed per filter`);
  known(input, field, ['field', ...OPERATORS]);
  const path = fieldPath(input.field, `${field}.field`);
  const ops = OPERATORS.filter((o) => Object.hasOwn(input, o));
  if (ops.length !== 1)
    throw new Refused(
      field,
      `must have exactly one operator of ${OPERATORS.join(', ')}, got ${ops.length === 0 ? 'none' : ops.join(', ')}`,
    );
  const op = ops[0] as Operator;
  const value = input[op];
  const at = `${field}.${op}`;
  switch (op) {
    case 'equals':
      return { op, path, value: scalar(value, at) };
    case 'in':
      return { op, path, values: new Set(list(value, at, L.inValues).map((v, i) => scalar(v, `${at}[${i}]`))) };
    case 'exists':
      if (typeof value !== 'boolean') throw new Refused(at, 'must be true or false');
      return { op, path, value };
    case 'prefix':
      if (!shortString(value)) throw new Refused(at, STRING_RULE);
      return { op, path, value };
    default:
      if (typeof value !== 'number' || !Number.isFinite(value)) throw new Refused(at, 'must be a number');
      return { op: op as Comparison, path, value };
  }
}

function fieldPath(input: unknown, field: string): string[] {
  if (!shortString(input)) throw new Refused(field, `is required: ${STRING_RULE}, a dotted path like properties.plan`);
  const segments = input.split('.');
  if (segments.some((s) => s.length === 0)) throw new Refused(field, 'must be a dotted path with no empty segment');
  if (segments.length > L.pathSegments) throw new Refused(field, `must have at most ${L.pathSegments} segments`);
  return segments;
}

function scalar(input: unknown, field: string): Scalar {
  if (input === null || typeof input === 'boolean') return input;
  if (typeof input === 'number' && Number.isFinite(input)) return input;
  if (typeof input === 'string' && input.length <= L.stringLength) return input;
  throw new Refused(field, `must be a string (at most ${L.stringLength} characters), a number, true, false or null`);
}
