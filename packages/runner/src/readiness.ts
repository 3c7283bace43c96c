import { setTimeout as sleep } from 'node:timers/promises';
import { READY_POLL_MS } from './constants.ts';

/** True once `GET url` answers 200. */
async function isReady(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/**
 * Polls a service's `/readyz` until it answers 200. Rejects when `giveUp()` returns a reason (the
 * service exited, the runner is stopping) or the timeout passes.
 */
export async function waitForReady(url: string, timeoutMs: number, giveUp: () => string | undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = giveUp();
    if (reason) throw new Error(reason);
    if (await isReady(url)) return;
    if (Date.now() > deadline) throw new Error(`not ready after ${Math.round(timeoutMs / 1000)} s (${url})`);
    await sleep(READY_POLL_MS);
  }
}
