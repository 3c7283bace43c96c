import type { Clock } from './clock.ts';
import { systemClock } from './clock.ts';
import * as limits from './constants.ts';
import type { LogSink } from './debug-log.ts';
import { debugEnabled, stderrSink } from './debug-log.ts';
import type { DeliveryError } from './errors.ts';
import { InvalidOptionError } from './errors.ts';
import type { HttpTransport } from './http-transport.ts';

export interface AnalyticsOptions {
  /**
   * Base URL of the Sluice ingest service (may include a path prefix); batches go to
   * `POST {endpoint}/v1/batch`. Default: `http://localhost:8080`.
   */
  endpoint?: string;
  /** Flush as soon as this many messages are queued; `1` sends every call right away. Default: `20`. */
  flushAt?: number;
  /** The same setting as `flushAt` (the Go v2 name). Giving both with different values is an error. Default: `20`. */
  size?: number;
  /** A queued message waits at most this many milliseconds before it is sent. Default: `5000`. */
  flushAfter?: number;
  /** Retries of a batch after its first attempt, on network errors, 5xx and 429. `0` disables retries. Default: `10`. */
  maxRetries?: number;
  /** Backoff before the first retry, in ms (doubled per retry, with jitter). Default: `100`. */
  retryMinDelay?: number;
  /** Upper bound of one backoff delay, in ms. A server's `Retry-After` is honoured instead (up to 60 s). Default: `10000`. */
  retryMaxDelay?: number;
  /** Deadline of one HTTP attempt, in ms; a timeout is retried like a network error. Default: `15000`. */
  timeout?: number;
  /** Batches sent at the same time. Default: `4`. */
  maxInFlight?: number;
  /** Messages that may wait in memory; further calls throw `QueueFullError`. Default: `100000`. */
  maxQueueSize?: number;
  /**
   * Called once per batch that could not be delivered (after retries, or at once for a 4xx).
   * The `'error'` event carries the same error. Default: none — with neither a callback nor an
   * `'error'` listener, the failure is written to the log sink even when debugging is off.
   */
  onError?: (error: DeliveryError) => void;
  /** Log lines to the log sink. Default: `true` when the `DEBUG` environment variable names `analytics`. */
  debug?: boolean;
  /** Where log lines go. Default: stderr. */
  log?: LogSink;
  /** How batches are sent. Default: undici with `maxInFlight` keep-alive connections. */
  transport?: HttpTransport;
  /** Time source for timestamps, flush timers and backoff. Default: the system clock. */
  clock?: Clock;
  /** Source of randomness for backoff jitter, in [0, 1). Default: `Math.random`. */
  random?: () => number;
}

/** Options after defaults and checks. */
export interface Settings {
  url: string;
  authorization: string;
  flushAt: number;
  flushAfterMs: number;
  maxRetries: number;
  retryMinDelayMs: number;
  retryMaxDelayMs: number;
  timeoutMs: number;
  maxInFlight: number;
  maxQueueSize: number;
  onError: ((error: DeliveryError) => void) | undefined;
  debug: boolean;
  log: LogSink;
  transport: HttpTransport | undefined;
  clock: Clock;
  random: () => number;
}

/** Applies defaults and checks every option up front; throws `InvalidOptionError`. */
export function resolveSettings(writeKey: string, options: AnalyticsOptions, env: NodeJS.ProcessEnv): Settings {
  if (typeof writeKey !== 'string' || writeKey === '')
    throw new InvalidOptionError('writeKey must be a non-empty string');
  if (options.flushAt !== undefined && options.size !== undefined && options.flushAt !== options.size) {
    throw new InvalidOptionError('flushAt and size are the same setting; give one of them');
  }
  return {
    url: batchUrl(options.endpoint ?? limits.DEFAULT_ENDPOINT),
    authorization: `Basic ${Buffer.from(`${writeKey}:`, 'utf8').toString('base64')}`,
    flushAt: integer('flushAt', options.flushAt ?? options.size ?? limits.DEFAULT_FLUSH_AT, 1),
    flushAfterMs: number('flushAfter', options.flushAfter ?? limits.DEFAULT_FLUSH_AFTER_MS, 1),
    maxRetries: integer('maxRetries', options.maxRetries ?? limits.DEFAULT_MAX_RETRIES, 0),
    retryMinDelayMs: number('retryMinDelay', options.retryMinDelay ?? limits.DEFAULT_RETRY_MIN_DELAY_MS, 0),
    retryMaxDelayMs: number('retryMaxDelay', options.retryMaxDelay ?? limits.DEFAULT_RETRY_MAX_DELAY_MS, 0),
    timeoutMs: number('timeout', options.timeout ?? limits.DEFAULT_REQUEST_TIMEOUT_MS, 1),
    maxInFlight: integer('maxInFlight', options.maxInFlight ?? limits.DEFAULT_MAX_IN_FLIGHT, 1),
    maxQueueSize: integer('maxQueueSize', options.maxQueueSize ?? limits.DEFAULT_MAX_QUEUE_SIZE, 1),
    onError: fn('onError', options.onError),
    debug: options.debug ?? debugEnabled(env.DEBUG),
    log: fn('log', options.log) ?? stderrSink,
    transport: options.transport,
    clock: options.clock ?? systemClock,
    random: fn('random', options.random) ?? Math.random,
  };
}

function batchUrl(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new InvalidOptionError(`endpoint "${endpoint}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidOptionError('endpoint must be an http or https URL');
  }
  if (url.search || url.hash) throw new InvalidOptionError('endpoint must not have a query or fragment');
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}${limits.BATCH_PATH}`;
}

function number(name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new InvalidOptionError(`${name} must be a number ≥ ${min}`);
  }
  return value;
}

function integer(name: string, value: unknown, min: number): number {
  if (!Number.isInteger(value) || (value as number) < min)
    throw new InvalidOptionError(`${name} must be an integer ≥ ${min}`);
  return value as number;
}

function fn<T>(name: string, value: T | undefined): T | undefined {
  if (value !== undefined && typeof value !== 'function') throw new InvalidOptionError(`${name} must be a function`);
  return value;
}
