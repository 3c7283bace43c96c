import type { SluiceConfig } from '@sluice/config';
import type { Delivery } from './delivery.ts';
import type { StepOutcome } from '../ordering/queue-rules.ts';
import type { Parking } from '../parking/parking.ts';
import { takenOut, type Turn } from '../intake/turn.ts';
import { attemptWindow, checkWindow } from './window.ts';

/** One attempt step of a turn's job (window check, pause, attempt) and what became of it. */
export type AttemptStep = (turn: Turn) => Promise<StepOutcome>;

/** What one attempt step reads and acts through. */
export interface AttemptStepDeps {
  config: () => SluiceConfig;
  delivery: Pick<Delivery, 'run' | 'deadLetter'>;
  /** Pausing (docs/deliverer.md "Pausing"); without it every destination is active. */
  parking?: Parking | undefined;
  /** Injected in tests (the window check); default `Date.now`. */
  now?: () => number;
}

const OUTCOMES = { delivered: 'delivered', retry: 'retrying', defer: 'retrying', dead: 'dead' } as const;

/**
 * One attempt step of a turn (the same for live, retried, parked and waiting jobs), and what became
 * of its job: dead-lettered `window_exhausted` once its window is closed (`window.ts`), parked while
 * its destination is stopped (or, for a live job, while its parked topic drains), else attempted
 * on its endpoints not paused on their own (`Parking.activeEndpoints`).
 */
export function createAttemptStep(deps: AttemptStepDeps): AttemptStep {
  const now = deps.now ?? Date.now;
  return async (turn): Promise<StepOutcome> => {
    const { destination, acceptedAt } = turn;
    let { job } = turn;
    const window = attemptWindow(job, acceptedAt, deps.config().retry.windowMs);
    const verdict = window === undefined ? undefined : checkWindow(window, now());
    if (verdict?.open === false) {
      await deps.delivery.deadLetter(job, {
        reason: 'window_exhausted',
        lastError: verdict.message,
        windowOpenedAt: window!.opensAt,
      });
      return 'dead';
    }
    const { parking } = deps;
    if (parking) {
      if (takenOut(turn) ? parking.stopped(destination) : parking.mustPark(destination)) {
        await parking.park(job, acceptedAt);
        return 'parked';
      }
      const endpoints = parking.activeEndpoints(destination, job.endpoints);
      if (endpoints !== job.endpoints) job = { ...job, endpoints };
    }
    return OUTCOMES[(await deps.delivery.run(job, destination)).kind];
  };
}
