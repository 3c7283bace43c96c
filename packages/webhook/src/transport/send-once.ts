import { Client } from 'undici';
import type { AddressPolicy } from '../address-policy.ts';
import { DeliveryTimeoutError } from '../errors.ts';
import { caBundle } from './ca-bundle.ts';
import { endpointTarget } from './endpoint-target.ts';
import { type LookupFunction, webhookConnector } from './guarded-connector.ts';
import { readBody } from './read-body.ts';
import { webhookPost } from './webhook-post.ts';

/** One webhook request sent on its own connection, under the deliverer's rules. */
export interface SingleRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  /** `delivery.timeoutMs`: one deadline for connect, the answer's headers and the body read. */
  timeoutMs: number;
  /** The SSRF policy in force (`delivery.ssrf`). */
  policy: AddressPolicy;
  /** `delivery.caFile`: a PEM bundle trusted besides the system roots. */
  caFile?: string;
  /** Bytes of the answer's body kept; the reading stops at the first byte past them. */
  keepBytes: number;
  /** Injected in tests to simulate DNS answers; default `dns.lookup`. */
  lookup?: LookupFunction;
}

/** What one request got: an answer (its status and first bytes), or the error that left it without one. */
export interface SingleAnswer {
  /** Absent when no answer came. */
  status?: number;
  /** From the start to the answer's headers (or to the failure), to 0.1 ms. */
  latencyMs: number;
  /** The answer's first `keepBytes` bytes (empty without an answer or a body). */
  body: Buffer;
  /** The answer had more than `keepBytes` bytes. */
  truncated: boolean;
  /** Why no answer came: `DeliveryTimeoutError`, `SsrfBlockedError`, `InvalidEndpointUrlError`, `CaFileError`, or a network error. */
  error?: Error;
}

const NO_BODY = Buffer.alloc(0);

/**
 * Sends one webhook request, once: no retry, no pooled connection. The connection is made by the
 * deliverer's connector (`webhookConnector`: TLS verified, the SSRF guard on the address connected
 * to), the POST by `webhookPost` (no redirect followed), under one deadline, and the answer's body
 * is read to `keepBytes` and no further. Never throws: a failure is the answer's `error`.
 */
export async function sendOnce(request: SingleRequest): Promise<SingleAnswer> {
  const started = performance.now();
  const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
  const { timeoutMs, keepBytes } = request;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(new DeliveryTimeoutError(timeoutMs)), timeoutMs);
  let client: Client | undefined;
  try {
    const target = endpointTarget(request.url);
    const ca = request.caFile === undefined ? undefined : caBundle(request.caFile);
    client = new Client(target.origin, {
      connect: webhookConnector({
        policy: () => request.policy,
        ...(ca && { ca }),
        ...(request.lookup && { lookup: request.lookup }),
      }),
    });
    const { headers, body } = request;
    const res = await webhookPost(client, { target, headers, body, signal: deadline.signal, timeoutMs });
    const latencyMs = elapsed();
    const kept = await readBody(res.body, keepBytes, keepBytes + 1);
    return { status: res.statusCode, latencyMs, body: kept.body ?? NO_BODY, truncated: kept.total > keepBytes };
  } catch (err) {
    const error = deadline.signal.aborted ? deadline.signal.reason : err;
    return { latencyMs: elapsed(), body: NO_BODY, truncated: false, error: error as Error };
  } finally {
    clearTimeout(timer);
    await client?.destroy().catch(() => undefined);
  }
}
