import { setTimeout as sleep } from 'node:timers/promises';
import type { Supervised } from './supervise.ts';

/** Why a server did not become ready: it exited (`exit` set) or the time ran out. */
export class NotReadyError extends Error {
  readonly exit: Supervised['exitInfo'];
  constructor(message: string, exit: Supervised['exitInfo']) {
    super(message);
    this.name = 'NotReadyError';
    this.exit = exit;
  }
}

/**
 * Polls `probe` until it answers true. Throws `NotReadyError` when the server exits first
 * ("exited during start-up (…)") or after `timeoutMs` ("did not become ready within N s").
 */
export async function waitUntilReady(
  server: Supervised,
  probe: () => Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    if (server.exitInfo) {
      const { code, signal } = server.exitInfo;
      throw new NotReadyError(`exited during start-up (${signal ?? `exit code ${code}`})`, server.exitInfo);
    }
    if (Date.now() > deadline)
      throw new NotReadyError(`did not become ready within ${options.timeoutMs / 1000} s`, undefined);
    if (await probe()) return;
    await Promise.race([sleep(options.intervalMs ?? 150), server.exited]);
  }
}
