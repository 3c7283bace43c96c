import { type Dispatcher, Pool } from 'undici';
import { LIMITS } from '@sluice/config';
import {
  type AddressPolicy,
  caBundle,
  DeliveryTimeoutError,
  type EndpointTarget,
  endpointTarget,
  type LookupFunction,
  MAX_BATCH_RESULT_BYTES,
  readBody,
  webhookConnector,
  webhookPost,
} from '@sluice/webhook';
import { RESPONSE_SNIPPET_BYTES } from '../service/constants.ts';
import type { AttemptResult } from './attempt-result.ts';
import { classifyError, classifyStatus, type Classification } from './classify.ts';
import { DeadlineQueue } from './deadline-queue.ts';

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  /** One deadline for connect + response (docs/reference/delivery.md). */
  timeoutMs: number;
  /** A batch: a 2xx answer's content type and body (up to `MAX_BATCH_RESULT_BYTES`) come back as `answer`. */
  readAnswer?: boolean;
  /**
   * The caller hands the body over and does not read it after `send`: a client in another thread
   * may move its bytes there instead of copying them (a batch body sent to one endpoint).
   */
  bodyHandedOver?: boolean;
}

/** Sends one webhook request and reports its classified outcome; never throws for network faults. */
export interface WebhookClient {
  send(request: WebhookRequest): Promise<AttemptResult>;
  close(): Promise<void>;
}

export interface PoolSettings {
  /** `delivery.connectionsPerEndpoint`. */
  connections: number;
  /** `delivery.caFile`: PEM bundle trusted besides the system roots. */
  caFile?: string;
}

export interface UndiciWebhookClientOptions {
  /** Settings for pools created from now on (read when a pool is made). */
  settings: () => PoolSettings;
  /** The SSRF policy in force, read on every connection. */
  policy: () => AddressPolicy;
  /** Injected in tests to simulate DNS answers. */
  lookup?: LookupFunction;
}

/**
 * Webhook requests over undici: one keep-alive `Pool` per endpoint origin, TLS always verified,
 * the SSRF guard inside the connector, redirects never followed (undici's `request` does not
 * follow them), and every response body read to at most 64 KB and then discarded (a batch's 2xx
 * answer to `MAX_BATCH_RESULT_BYTES`, for its per-event results).
 */
export class UndiciWebhookClient implements WebhookClient {
  readonly #pools = new Map<string, Pool>();
  /** Each pool's dispatcher that notes when a request got its connection (`#onWire`). */
  readonly #timed = new WeakMap<Pool, Dispatcher>();
  /** A request's deadline signal → when it was handed to a connection (`performance.now()`). */
  readonly #wiredAt = new WeakMap<object, number>();
  readonly #ca = new Map<string, string[]>();
  /** Endpoint URL → its origin and request path, parsed once (endpoints are few). */
  readonly #targets = new Map<string, EndpointTarget | Error>();
  readonly #deadlines = new DeadlineQueue();

  private readonly options: UndiciWebhookClientOptions;
  constructor(options: UndiciWebhookClientOptions) {
    this.options = options;
  }

  async send(request: WebhookRequest): Promise<AttemptResult> {
    const sent: Sent = { endpoint: request.url, at: Date.now(), started: performance.now() };
    let target: EndpointTarget;
    let pool: Pool;
    try {
      target = this.#target(request.url);
      pool = this.#pool(target.origin);
    } catch (err) {
      return result(sent, classifyError(err));
    }
    const { timeoutMs } = request;
    // One deadline from here: the wait for a pooled connection, connect, TLS, the response
    // headers and the body read (undici's own timers are set later so they never fire first).
    const deadline = this.#deadlines.start(timeoutMs, () => new DeliveryTimeoutError(timeoutMs));
    try {
      const res = await webhookPost(this.#timed.get(pool)!, {
        target,
        headers: request.headers,
        body: request.body,
        signal: deadline,
        timeoutMs,
      });
      const status = res.statusCode;
      const attempt = result(sent, classifyStatus(status, res.headers['retry-after'], Date.now()));
      attempt.status = status;
      const wiredAt = this.#wiredAt.get(deadline);
      if (wiredAt !== undefined) attempt.connectionWaitMs = Math.round((wiredAt - sent.started) * 10) / 10;
      if (request.readAnswer === true && attempt.outcome === 'success') {
        const kept = await readBody(res.body, MAX_BATCH_RESULT_BYTES, MAX_BATCH_RESULT_BYTES + 1);
        const contentType = res.headers['content-type'];
        attempt.answer = { truncated: kept.total > MAX_BATCH_RESULT_BYTES };
        if (typeof contentType === 'string') attempt.answer.contentType = contentType;
        if (kept.body !== undefined) {
          attempt.answer.body = kept.body;
          attempt.responseSnippet = kept.body.subarray(0, RESPONSE_SNIPPET_BYTES).toString('utf8');
        }
        return attempt;
      }
      const kept = await readBody(res.body, RESPONSE_SNIPPET_BYTES, LIMITS.responseBodyBytes);
      if (kept.body !== undefined) attempt.responseSnippet = kept.body.toString('utf8');
      return attempt;
    } catch (err) {
      const failed = result(sent, classifyError(deadline.aborted ? deadline.reason : err));
      // A request that timed out still queued for a connection waited here the whole time.
      const wiredAt = this.#wiredAt.get(deadline);
      failed.connectionWaitMs =
        wiredAt === undefined ? failed.latencyMs : Math.round((wiredAt - sent.started) * 10) / 10;
      return failed;
    } finally {
      this.#deadlines.finish(deadline, timeoutMs);
    }
  }

  /** Closes pools of origins not in `keep` (endpoints removed by a config reload). */
  async retain(keep: Set<string>): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [key, pool] of this.#pools) {
      if (!keep.has(key.slice(0, key.indexOf('|')))) {
        this.#pools.delete(key);
        closing.push(pool.close().catch(() => undefined));
      }
    }
    await Promise.all(closing);
  }

  async close(): Promise<void> {
    this.#deadlines.close();
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => p.destroy())));
  }

  #target(url: string): EndpointTarget {
    let target = this.#targets.get(url);
    if (!target) {
      try {
        target = endpointTarget(url);
      } catch (err) {
        target = err as Error;
      }
      if (this.#targets.size >= MAX_CACHED_TARGETS) this.#targets.clear();
      this.#targets.set(url, target);
    }
    if (target instanceof Error) throw target;
    return target;
  }

  #pool(origin: string): Pool {
    const settings = this.options.settings();
    const key = `${origin}|${settings.connections}|${settings.caFile ?? ''}`;
    let pool = this.#pools.get(key);
    if (!pool) {
      for (const [other, old] of this.#pools) {
        // Settings changed for this origin: new requests use a new pool, the old one drains.
        if (other.startsWith(`${origin}|`)) {
          this.#pools.delete(other);
          void old.close().catch(() => undefined);
        }
      }
      const ca = settings.caFile ? this.#caBundle(settings.caFile) : undefined;
      pool = new Pool(origin, {
        connections: settings.connections,
        pipelining: 1,
        connect: webhookConnector({
          policy: this.options.policy,
          ...(ca && { ca }),
          ...(this.options.lookup && { lookup: this.options.lookup }),
        }),
      });
      this.#pools.set(key, pool);
      this.#timed.set(pool, pool.compose(this.#onWire));
    }
    return pool;
  }

  /**
   * Notes when undici hands a request to a connection (it starts writing it): the time before is
   * spent queued in this process for one of the pool's connections, not at the endpoint.
   */
  readonly #onWire: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (opts, handler) => {
    const signal = (opts as { signal?: object }).signal;
    if (!signal) return dispatch(opts, handler);
    const timed = new Proxy(handler, {
      get: (target, prop) => {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== 'function') return value;
        if (prop !== 'onRequestStart' && prop !== 'onConnect') return value.bind(target);
        return (...args: unknown[]) => {
          this.#wiredAt.set(signal, performance.now());
          return value.apply(target, args);
        };
      },
    });
    return dispatch(opts, timed);
  };

  #caBundle(path: string): string[] {
    let ca = this.#ca.get(path);
    if (!ca) {
      ca = caBundle(path);
      this.#ca.set(path, ca);
    }
    return ca;
  }
}

/** Parsed endpoint URLs kept; past this the cache starts over (URLs come from the config). */
const MAX_CACHED_TARGETS = 10_000;

/** A request as it left: its endpoint URL, when (`Date.now()`) and its `performance.now()` then. */
interface Sent {
  endpoint: string;
  at: number;
  started: number;
}

function result(sent: Sent, c: Classification): AttemptResult {
  const r: AttemptResult = {
    endpoint: sent.endpoint,
    at: sent.at,
    latencyMs: Math.round((performance.now() - sent.started) * 10) / 10,
    outcome: c.outcome,
  };
  if (c.error !== undefined) r.error = c.error;
  if (c.retryAfterMs !== undefined) r.retryAfterMs = c.retryAfterMs;
  return r;
}
