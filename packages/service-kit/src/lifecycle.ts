import type { Logger } from '@sluice/logging';
import type { ReadinessCheck } from './ops-routes.ts';

/**
 * Something a service starts and must end again: a Kafka client, a thread, a group of consumers,
 * a server, a config watch. Every hook is optional.
 */
export interface Part {
  /** Names the part in the log line of a stop that failed. */
  readonly name: string;
  /** Stops taking new work. Called on every part, newest first, as soon as a shutdown begins. */
  stopIntake?(): void;
  /** Ends the part; runs once every part started after it has ended. */
  stop?(): Promise<void> | void;
  /** Named `/readyz` checks; a check name that several parts use passes when all of theirs pass. */
  ready?: Record<string, ReadinessCheck>;
  /** Settles when the part cannot go on (a record handler bug, a thread that died): the process must stop. */
  fatal?: Promise<Error>;
}

/**
 * The parts of a service in the order they were started. A start that fails half-way and a
 * shutdown both end them newest first, each after the one started after it has ended: the HTTP
 * intake closes before the consumers drain, the consumers commit before the producers flush,
 * and the clients everything else used close last.
 */
export class Lifecycle {
  readonly #logger: Logger;
  readonly #parts: Part[] = [];
  #stopped: Promise<void> | undefined;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Adds a part that is already running (or has nothing to start). */
  add(part: Part): void {
    if (this.#stopped) throw new Error(`cannot start ${part.name}: the service is stopping`);
    this.#parts.push(part);
  }

  /**
   * Adds `part`, then runs `start`. The part is added first, so a start that fails half-way (a
   * client connected before a later call failed) is ended as well.
   */
  async start<T>(part: Part, start: () => Promise<T> | T): Promise<T> {
    this.add(part);
    return await start();
  }

  /**
   * Runs `open`, which builds the thing to end (a thread's factory that starts it), then adds the
   * part `describe` makes of it. An `open` that fails must leave nothing running itself.
   */
  async open<T>(name: string, open: () => Promise<T>, describe: (value: T) => Omit<Part, 'name'>): Promise<T> {
    const value = await open();
    this.add({ name, ...describe(value) });
    return value;
  }

  /** The `/readyz` checks of every part added so far, by name. */
  readiness(): Record<string, ReadinessCheck> {
    const byName = new Map<string, ReadinessCheck[]>();
    for (const part of this.#parts) {
      for (const [name, check] of Object.entries(part.ready ?? {}))
        byName.set(name, [...(byName.get(name) ?? []), check]);
    }
    const checks: Record<string, ReadinessCheck> = {};
    for (const [name, list] of byName) {
      checks[name] = async () => (await Promise.all(list.map((check) => check()))).every(Boolean);
    }
    return checks;
  }

  /** Settles with the first fatal error of any part added so far. */
  fatal(): Promise<Error> {
    return Promise.race(this.#parts.flatMap((p) => (p.fatal ? [p.fatal] : [])));
  }

  /**
   * Ends every part: first each one's `stopIntake`, newest first, then each one's `stop`, newest
   * first, one after the other. A hook that fails is logged and the others still run. Returns the
   * same promise when called again; no part can be added afterwards.
   */
  stop(): Promise<void> {
    this.#stopped ??= this.#stopAll();
    return this.#stopped;
  }

  async #stopAll(): Promise<void> {
    const parts = this.#parts.toReversed();
    for (const part of parts) {
      try {
        part.stopIntake?.();
      } catch (err) {
        this.#logger.warn({ err, part: part.name }, `${part.name}: stopping its intake failed`);
      }
    }
    for (const part of parts) {
      try {
        await part.stop?.();
      } catch (err) {
        this.#logger.warn({ err, part: part.name }, `${part.name}: stop failed`);
      }
    }
  }
}
