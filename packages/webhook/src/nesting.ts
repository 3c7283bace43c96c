/**
 * The deepest nesting of arrays and objects a webhook body may have; the body itself is level 1,
 * its `properties` level 2. A deeper body is rejected (`body_too_deep`) instead of rendered:
 * `JSON.stringify` recurses once per level and runs out of stack a few thousand levels down,
 * which would turn one event into a crash of the whole consumer. 1,000 levels stays far below
 * that point on any thread and far above anything an analytics payload needs.
 */
export const MAX_BODY_DEPTH = 1_000;

/**
 * Whether `value` nests arrays and objects more than `limit` levels deep. Iterative (an explicit
 * stack, no recursion), so it is safe for any depth; it stops at the first level past `limit`, and
 * visits each node once: CPU and memory are bounded by the size of the value.
 */
export function nestingExceeds(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop() as Record<string, unknown>;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    if (Array.isArray(node)) {
      for (const child of node) {
        if (typeof child === 'object' && child !== null) {
          nodes.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const key in node) {
        const child = node[key];
        if (typeof child === 'object' && child !== null) {
          nodes.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}
