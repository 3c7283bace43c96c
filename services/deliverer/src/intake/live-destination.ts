import type { Destination, SluiceConfig } from '@sluice/config';
import { destinationGoneError } from '@sluice/envelope';
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
 * Why a destination may not send, as its dead letter says it: `destination_deleted` when it no
 * longer exists (deleted at runtime, or removed from the config file), `no_endpoints` when it
 * exists but is disabled.
 */
export interface CannotSend {
  reason: 'destination_deleted' | 'no_endpoints';
  lastError: string;
}

/** The destination a record is for: its id, and the destination in force with that id, if any. */
export interface DestinationLookup {
  destinationId: string;
  destination: Destination | undefined;
}

/**
 * Why an event's destination may no longer send, or undefined while it may: gone from the config
 * in force, or disabled there. The one rule every intake applies (docs/deliverer.md, "Intake").
 */
export function whyDestinationCannotSend(lookup: DestinationLookup): CannotSend | undefined {
  const { destination, destinationId } = lookup;
  if (destination === undefined)
    return { reason: 'destination_deleted', lastError: destinationGoneError(destinationId) };
  if (!destination.enabled) return { reason: 'no_endpoints', lastError: `destination ${destinationId} is disabled` };
  return undefined;
}

/** The destination in force with `destinationId`, looked up for `whyDestinationCannotSend`. */
export function lookUpDestination(config: SluiceConfig, destinationId: string): DestinationLookup {
  return { destinationId, destination: config.destinations.find((d) => d.id === destinationId) };
}

/**
 * The destination a job is for, if it may still send; otherwise the job is dead-lettered with the
 * reason `whyDestinationCannotSend` gives (replayable like any dead letter) and undefined is
 * returned. Every intake — a redelivered, a parked and a waiting record — goes through here before
 * delivering.
 */
export async function liveDestinationOrDeadLetter(
  ctx: LiveDestinationContext,
  job: DeliveryJob,
): Promise<Destination | undefined> {
  const lookup = lookUpDestination(ctx.config(), job.destinationId);
  const cannot = whyDestinationCannotSend(lookup);
  if (cannot === undefined) return lookup.destination;
  await ctx.deadLetter(job, cannot);
  return undefined;
}
