import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { Readable } from 'node:stream';
import { Pool } from 'undici';
import { LIMITS } from '@sluice/config';
import { RESPONSE_SNIPPET_BYTES } from '../constants.ts';
import { CaFileError, DeliveryTimeoutError, InvalidEndpointUrlError } from '../errors.ts';
import type { AddressPolicy } from '../domain/address-policy.ts';
import type { AttemptResult } from '../domain/attempt-result.ts';
import { classifyError, classifyStatus, type Classification } from '../domain/classify.ts';
import { guardedConnector, type LookupFunction } from './guarded-connector.ts';

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  /** One deadline for connect + response (SPEC §6). */
  timeoutMs: number;
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
 * follow them), and every response body read to at most 64 KB and then discarded.
 */
export class UndiciWebhookClient implements WebhookClient {
  readonly #pools = new Map<string, Pool>();
  readonly #ca = new Map<string, string[]>();

  constructor(private readonly options: UndiciWebhookClientOptions) {}

  async send(request: WebhookRequest): Promise<AttemptResult> {
    const at = Date.now();
    const started = performance.now();
    const done = (c: Classification, extra: Partial<AttemptResult> = {}): AttemptResult => ({
      endpoint: request.url,
      at,
      latencyMs: Math.round((performance.now() - started) * 10) / 10,
      ...c,
      ...extra,
    });
    let url: URL;
    let pool: Pool;
    try {
      url = new URL(request.url);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidEndpointUrlError(request.url);
      pool = this.#pool(url);
    } catch (err) {
      return done(classifyError(err instanceof TypeError ? new InvalidEndpointUrlError(request.url) : err));
    }
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new DeliveryTimeoutError(request.timeoutMs)), request.timeoutMs);
    try {
      const res = await pool.request({
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: request.headers,
        body: request.body,
        signal: abort.signal,
        // Our own timer is the deadline; undici's must not fire first.
        headersTimeout: request.timeoutMs + 1_000,
        bodyTimeout: request.timeoutMs + 1_000,
      });
      const classification = classifyStatus(res.statusCode, res.headers['retry-after'], Date.now());
      const status = res.statusCode;
      const latency = done(classification, { status });
      const snippet = await readSnippet(res.body);
      return snippet ? { ...latency, responseSnippet: snippet } : latency;
    } catch (err) {
      return done(classifyError(abort.signal.aborted ? new DeliveryTimeoutError(request.timeoutMs) : err));
    } finally {
      clearTimeout(timer);
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
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.close().catch(() => p.destroy())));
  }

  #pool(url: URL): Pool {
    const settings = this.options.settings();
    const key = `${url.origin}|${settings.connections}|${settings.caFile ?? ''}`;
    let pool = this.#pools.get(key);
    if (!pool) {
      for (const [other, old] of this.#pools) {
        // Settings changed for this origin: new requests use a new pool, the old one drains.
        if (other.startsWith(`${url.origin}|`)) {
          this.#pools.delete(other);
          void old.close().catch(() => undefined);
        }
      }
      const ca = settings.caFile ? this.#caBundle(settings.caFile) : undefined;
      pool = new Pool(url.origin, {
        connections: settings.connections,
        pipelining: 1,
        connect: guardedConnector({
          policy: this.options.policy,
          connect: { rejectUnauthorized: true, ...(ca && { ca }) },
          ...(this.options.lookup && { lookup: this.options.lookup }),
        }),
      });
      this.#pools.set(key, pool);
    }
    return pool;
  }

  #caBundle(path: string): string[] {
    let ca = this.#ca.get(path);
    if (!ca) {
      try {
        ca = [...rootCertificates, readFileSync(path, 'utf8')];
      } catch (err) {
        throw new CaFileError(path, err as Error);
      }
      this.#ca.set(path, ca);
    }
    return ca;
  }
}

/** Reads at most 64 KB of a response body (then cancels it) and returns its first 1 KB as text. */
async function readSnippet(body: Readable): Promise<string | undefined> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let total = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (keptBytes < RESPONSE_SNIPPET_BYTES) {
        const part = chunk.subarray(0, RESPONSE_SNIPPET_BYTES - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
      total += chunk.length;
      if (total >= LIMITS.responseBodyBytes) break; // leaving the loop destroys the stream
    }
  } catch {
    // The answer is already classified by its status; a body cut short changes nothing.
  }
  if (!body.destroyed && !body.readableEnded) body.destroy();
  return keptBytes > 0 ? Buffer.concat(kept).toString('utf8') : undefined;
}
