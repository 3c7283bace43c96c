/**
 * Polls `check` until it returns a truthy value or `timeoutMs` passes. `what` names the condition in
 * the timeout error; as a function it is read at the timeout (counts as they were then, not at the call).
 */
export async function waitUntil<T>(
  check: () => T | Promise<T>,
  timeoutMs = 15_000,
  what: string | (() => string) = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
