import type { ConsumedRecord, RecordSlot } from '@sluice/kafka';
import { createDeliverStep, rejecter, type RecordHandlerDeps } from './handle-record.ts';
import { intakeContext, liveDestinationOrDeadLetter } from './live-destination.ts';
import { classifyFailure } from './poison.ts';
import { unparkJob } from '../parking/parked-job.ts';
import { isInfrastructureFailure } from './infrastructure-errors.ts';

/**
 * The handler of the parked topics (docs/deliverer.md "Pausing"): a parked record is its job again,
 * its window moved later by the time it waited (`unparkJob`), and goes through the same step as a
 * live one — attempted, or parked again if its destination was stopped after the record was handed
 * out. A destination gone from the config in force (deleted at runtime, or removed from the file)
 * dead-letters its parked events `destination_deleted`, one disabled there `no_endpoints`, as a
 * retry of it would be (`liveDestinationOrDeadLetter`). An unreadable record goes to `sluice.rejected`.
 */
export function createParkedHandler(
  deps: RecordHandlerDeps,
): (record: ConsumedRecord, slot?: RecordSlot) => Promise<void> {
  const now = deps.now ?? Date.now;
  const reject = rejecter(deps);
  const deliver = createDeliverStep(deps);
  const live = intakeContext(deps);
  return async (record, slot) => {
    let sourceId: string | undefined;
    try {
      if (!record.value || record.value.length === 0)
        return reject(record, { code: 'empty', message: 'parked record has no body' });
      const unparked = unparkJob(
        { key: record.key?.toString() ?? null, body: record.value, headers: record.headers },
        now(),
      );
      if (!unparked.ok) return reject(record, { code: 'invalid_parked_headers', message: unparked.message });
      const { job, acceptedAt } = unparked;
      sourceId = job.sourceId;
      const destination = await liveDestinationOrDeadLetter(live, job);
      // Dead-lettered here, it leaves its user's queue as any dead letter does (per-user order).
      if (!destination) return await deps.ordering?.deadLetteredAtIntake(job, record.partition);
      await deliver({
        job,
        destination,
        acceptedAt,
        source: 'parked',
        partition: record.partition,
        ...(slot && { slot }),
      });
    } catch (err) {
      const verdict = classifyFailure(err, 'deliver', isInfrastructureFailure);
      if (verdict.kind === 'fatal') throw err;
      return reject(record, { code: verdict.reason, message: verdict.message, sourceId });
    }
  };
}
