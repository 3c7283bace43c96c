/** A value a condition compares a field with. */
export type Scalar = string | number | boolean | null;

export const COMPARISONS = ['gt', 'gte', 'lt', 'lte'] as const;
export type Comparison = (typeof COMPARISONS)[number];

/** The operators of a leaf condition, one per condition. */
export const OPERATORS = ['equals', 'in', 'exists', 'prefix', ...COMPARISONS] as const;
export type Operator = (typeof OPERATORS)[number];

/** A field of the call, by its dotted path split into segments (`properties.plan` → `['properties', 'plan']`). */
export type FieldPath = readonly string[];

/**
 * A validated `where` condition (docs/reference/filters.md). Plain data (sets, arrays, strings), so a
 * config holding it can be cloned and compared.
 */
export type Condition =
  | { op: 'all' | 'any'; of: readonly Condition[] }
  | { op: 'not'; of: Condition }
  | { op: 'equals'; path: FieldPath; value: Scalar }
  | { op: 'in'; path: FieldPath; values: ReadonlySet<Scalar> }
  | { op: 'exists'; path: FieldPath; value: boolean }
  | { op: 'prefix'; path: FieldPath; value: string }
  | { op: Comparison; path: FieldPath; value: number };

/** `events`: exact names in a set, patterns as the literal parts between their `*`s. */
export interface EventNames {
  exact: ReadonlySet<string>;
  patterns: readonly (readonly string[])[];
}

/** A destination's filter after validation: every part present must accept the call. */
export interface EventFilter {
  types?: ReadonlySet<string>;
  events?: EventNames;
  where?: Condition;
}

/** Why a filter was refused: the field (relative to the path given to `parseFilter`) and the problem. */
export interface FilterProblem {
  field: string;
  problem: string;
}
