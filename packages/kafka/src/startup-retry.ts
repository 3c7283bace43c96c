import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@sluice/logging';
import { Counter, Gauge, type Registry } from 'prom-client';
import { describeKafkaAnswer, isRetriableKafkaError } from './retriable-error.ts';

/** Runs a Kafka call again while it fails with a retriable answer (`isRetriableKafkaError`). */
export type RetryKafka = <T>(operation: string, call: () => Promise<T>) => Promise<T>;

/** The start-up deadline passed while Kafka still answered "not yet": the service gives up. */
export class StartupDeadlineError extends Error {
  readonly code = 'startup_deadline';
  readonly retryable = false;
  constructor(operation: string, answer: string, timeoutMs: number, options: { cause: unknown }) {
    super(
      `Kafka start-up deadline (${Math.round(timeoutMs / 1000)} s, kafka.startupTimeout) passed: ` +
        `${operation} still answered ${answer}`,
      options,
    );
    this.name = 'StartupDeadlineError';
  }
}

export interface StartupRetryOptions {
  /** How long, from now, retriable answers are waited out (`kafka.startupTimeout`, default 5 min). */
  timeoutMs: number;
  /** Where "waiting for Kafka" goes (warn); absent: no log line. */
  logger?: Logger;
  /** Registers `sluice_startup_waiting` and `sluice_startup_retries_total`; absent: no metrics. */
  registry?: Registry;
  /** Least time between two "waiting for Kafka" lines; default 5 s. */
  logEveryMs?: number;
  /** First wait between two tries, doubling up to `maxDelayMs`; defaults 250 ms and 2 s. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  now?: () => number;
}

interface StartupMetrics {
  waiting: Gauge<'operation'>;
  retries: Counter<'operation'>;
}

function startupMetrics(registry: Registry): StartupMetrics {
  const waiting =
    (registry.getSingleMetric('sluice_startup_waiting') as Gauge<'operation'> | undefined) ??
    new Gauge({
      name: 'sluice_startup_waiting',
      help: 'Start-up Kafka calls waiting out a retriable answer right now (1 while waiting), by operation',
      labelNames: ['operation'],
      registers: [registry],
    });
  const retries =
    (registry.getSingleMetric('sluice_startup_retries_total') as Counter<'operation'> | undefined) ??
    new Counter({
      name: 'sluice_startup_retries_total',
      help: 'Retriable Kafka answers to start-up calls that were tried again, by operation',
      labelNames: ['operation'],
      registers: [registry],
    });
  return { waiting, retries };
}

/**
 * The one way a service's start-up waits out Kafka's "not yet" answers (docs/operations.md,
 * "Start-up"): every start-up call runs through `run`, which tries it again while it fails with a
 * retriable answer, until one deadline shared by the whole start-up. A non-retriable error ends
 * the call at once; the deadline ends it with `StartupDeadlineError`. Meanwhile `waitingFor` says
 * what it waits for (`/readyz`), the log says it at most once every `logEveryMs`, and
 * `sluice_startup_waiting{operation}` is 1.
 */
export class StartupRetry {
  readonly deadline: number;
  readonly #options: StartupRetryOptions;
  readonly #now: () => number;
  readonly #metrics: StartupMetrics | undefined;
  /** Operation → what it last answered, while it waits. */
  readonly #waiting = new Map<string, string>();
  #loggedAt = Number.NEGATIVE_INFINITY;

  constructor(options: StartupRetryOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.deadline = this.#now() + options.timeoutMs;
    this.#metrics = options.registry && startupMetrics(options.registry);
  }

  /** What start-up waits for now (`"list offsets of sluice.events answered NOT_LEADER_FOR_PARTITION"`), if anything. */
  get waitingFor(): string | undefined {
    const [first] = this.#waiting;
    return first && `${first[0]} answered ${first[1]}`;
  }

  /** Runs `call` until it succeeds, fails with a non-retriable error, or the deadline passes. */
  readonly run: RetryKafka = async (operation, call) => {
    let delayMs = this.#options.initialDelayMs ?? 250;
    const maxDelayMs = this.#options.maxDelayMs ?? 2_000;
    try {
      for (;;) {
        try {
          return await call();
        } catch (err) {
          if (!isRetriableKafkaError(err)) throw err;
          const answer = describeKafkaAnswer(err);
          if (this.#now() >= this.deadline) {
            throw new StartupDeadlineError(operation, answer, this.#options.timeoutMs, { cause: err });
          }
          this.#waitingOn(operation, answer);
        }
        await sleep(Math.min(delayMs, Math.max(0, this.deadline - this.#now())));
        delayMs = Math.min(delayMs * 2, maxDelayMs);
      }
    } finally {
      if (this.#waiting.delete(operation)) this.#metrics?.waiting.set({ operation }, 0);
    }
  };

  #waitingOn(operation: string, answer: string): void {
    this.#waiting.set(operation, answer);
    this.#metrics?.waiting.set({ operation }, 1);
    this.#metrics?.retries.inc({ operation });
    const now = this.#now();
    if (now - this.#loggedAt < (this.#options.logEveryMs ?? 5_000)) return;
    this.#loggedAt = now;
    this.#options.logger?.warn(
      { operation, answer, deadline: new Date(this.deadline).toISOString() },
      `waiting for Kafka: ${operation} answered ${answer}; retrying until ${new Date(this.deadline).toISOString()}`,
    );
  }
}

/**
 * A runtime Kafka call (not start-up) that may meet a "not yet" answer: tried again for up to
 * `timeoutMs` (default 5 s) through the same rules as start-up, without log line or metric.
 */
export function retryTransient<T>(call: () => Promise<T>, timeoutMs = 5_000): Promise<T> {
  return new StartupRetry({ timeoutMs }).run('kafka call', call);
}
