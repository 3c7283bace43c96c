import type { Destination, SluiceConfig } from '@sluice/config';
import type { Delivery } from '../attempt/delivery.ts';
import type { DeadLetter } from '../attempt/settle.ts';
import type { DeliveryJob } from './delivery-job.ts';

/** What the intake decision needs: the config, and how an event whose destination may not send is dead-lettered. */
export interface LiveDestinationContext {
  config: () => SluiceConfig;
  deadLetter: (job: DeliveryJob, dead: DeadLetter) => Promise<void>;
}

/** The context from a record handler's config and `Delivery`, whose `deadLetter` writes the dead letter. */
export function intakeContext(deps: {
  config: () => SluiceConfig;
  delivery: Pick<Delivery, 'deadLetter'>;
}): LiveDestinationContext {
  return { config: deps.config, deadLetter: (job, dead) => deps.delivery.deadLetter(job, dead) };
}

/**
 * Why an event's destination may no longer send, or undefined while it may: removed from the
 * config, or disabled there. The one rule every intake applies (docs/deliverer.md, "Intake").
 */
function whyDestinationCannotSend(destination: Destination | undefined, destinationId: string): string | undefined {
  if (destination === undefined) return `destination ${destinationId} is gone`;
  if (!destination.enabled) return `destination ${destinationId} is disabled`;
  return undefined;
}

/**
 * The destination a job is for, if it may still send; otherwise the job is dead-lettered
 * `no_endpoints` (replayable like any dead letter) and undefined is returned. Every intake — a
 * redelivered, a parked and a waiting record — goes through here before delivering.
 */
export async function liveDestinationOrDeadLetter(
  ctx: LiveDestinationContext,
  job: DeliveryJob,
): Promise<Destination | undefined> {
  const destination = ctx.config().destinations.find((d) => d.id === job.destinationId);
  const why = whyDestinationCannotSend(destination, job.destinationId);
  if (why === undefined) return destination;
  await ctx.deadLetter(job, { reason: 'no_endpoints', lastError: why });
  return undefined;
}
