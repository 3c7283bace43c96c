/**
 * Checks of a JSON answer against the shape of its type, written as one check per field so that
 * the compiler makes a guard name every field of the type it guards.
 */

/** Where `value` departs from the shape (`path`, or a path below it), or undefined when it fits. */
export type Check = (value: unknown, path: string) => string | undefined;

/** A guard of one answer: whether a value is one, and where it departs from it. */
export interface AnswerGuard<T> {
  is(value: unknown): value is T;
  /** The path of the first field that departs (`totals[0].accepted`; `$` for the answer itself), or undefined. */
  mismatch(value: unknown): string | undefined;
}

const when =
  (test: (value: unknown) => boolean): Check =>
  (value, path) =>
    test(value) ? undefined : path;

export const isText: Check = when((v) => typeof v === 'string');
/** An ISO 8601 date and time the way the API writes them (`2026-01-31T12:00:00.000Z`). */
export const isTime: Check = when((v) => typeof v === 'string' && !Number.isNaN(Date.parse(v)));
export const isCount: Check = when((v) => Number.isSafeInteger(v) && (v as number) >= 0);
export const oneOf = (values: readonly string[]): Check => when((v) => typeof v === 'string' && values.includes(v));
export const orNull =
  (check: Check): Check =>
  (value, path) =>
    value === null ? undefined : check(value, path);

export const listOf =
  (check: Check): Check =>
  (value, path) => {
    if (!Array.isArray(value)) return path;
    for (const [i, item] of value.entries()) {
      const at = check(item, `${path}[${i}]`);
      if (at !== undefined) return at;
    }
    return undefined;
  };

/** An object holding (at least) each field, each passing its check. */
export const objectOf =
  <T>(fields: { [K in keyof T]-?: Check }): Check =>
  (value, path) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return path;
    for (const [name, check] of Object.entries<Check>(fields)) {
      const at = check((value as Record<string, unknown>)[name], `${path}.${name}`);
      if (at !== undefined) return at;
    }
    return undefined;
  };

export function answerGuard<T>(fields: { [K in keyof T]-?: Check }): AnswerGuard<T> {
  const check = objectOf<T>(fields);
  const mismatch = (value: unknown) => check(value, '$')?.replace(/^\$\./, '');
  return { is: (value): value is T => mismatch(value) === undefined, mismatch };
}
