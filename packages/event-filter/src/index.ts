export { filterAccepts } from './evaluate.ts';
export { FILTER_LIMITS } from './limits.ts';
export { parseFilter } from './parse.ts';
export type { Condition, EventFilter, FilterProblem, Scalar } from './types.ts';
