import { retryTransient, type Admin } from '@sluice/kafka';
import type { Logger } from '@sluice/logging';

export interface WaitingTrimDeps {
  admin: Admin;
  /** The group that reads the waiting topics (the deliverer's main group). */
  groupId: string;
  /** The waiting topics that exist now. */
  topics: () => readonly string[];
  logger: Logger;
  /** How often; default a minute. */
  everyMs?: number;
}

/**
 * Deletes the records of the waiting topics (docs/reference/ordering.md) below the offsets their
 * group committed: each was delivered, dead-lettered, dropped as a copy, or written again at the
 * tail before its offset was committed, so nothing below is needed any more. Keeps topics whose
 * retention is unlimited from growing with every re-append. Returns the stop.
 */
export function startWaitingTrim(deps: WaitingTrimDeps): () => void {
  let running = false;
  const trim = async () => {
    if (running) return;
    running = true;
    try {
      for (const topic of deps.topics()) {
        const [committed] = await retryTransient(() =>
          deps.admin.fetchOffsets({ groupId: deps.groupId, topics: [topic] }),
        );
        const partitions = (committed?.partitions ?? [])
          .filter((p) => Number(p.offset) > 0)
          .map((p) => ({ partition: p.partition, offset: p.offset }));
        if (partitions.length > 0) await deps.admin.deleteTopicRecords({ topic, partitions });
      }
    } catch (err) {
      deps.logger.warn({ err }, 'consumed waiting records not deleted; trying again later');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void trim(), deps.everyMs ?? 60_000);
  timer.unref();
  return () => clearInterval(timer);
}
