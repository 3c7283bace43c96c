import type { Endpoint } from '@sluice/config';
import type { DestinationCap } from '../transport/destination-cap.ts';
import type { TimedOutRequest } from '../transport/timeout-log.ts';
import type { WebhookClient, WebhookRequest } from '../transport/webhook-client.ts';
import type { AttemptResult } from '../transport/attempt-result.ts';
import type { Deferred } from './deferral.ts';
import type { AdmissionContext, EndpointGates } from './endpoint-gates.ts';
import { TIMEOUT_CODE } from '@sluice/webhook';
import type { DelivererMetrics } from '../service/metrics.ts';

/** An endpoint its gate let through; `probe` when its request is the breaker's half-open probe. */
export interface Admitted {
  endpoint: Endpoint;
  probe: boolean;
}

/**
 * What became of one endpoint's request: its result, or held back before it was sent. Either names
 * the endpoint by its `ref` (the redacted URL records carry), never by its URL.
 */
export type Outcome = AttemptResult | Deferred;
export const isDeferred = (o: Outcome): o is Deferred => (o as Deferred).reason !== undefined;

/** Asks each endpoint's gate (breaker, `Retry-After`, rate limit) once: one request each may go, or none. */
export function admitEndpoints(
  gates: EndpointGates,
  endpoints: readonly Endpoint[],
  context: AdmissionContext,
): { admitted: Admitted[]; deferred: Deferred[] } {
  const admitted: Admitted[] = [];
  const deferred: Deferred[] = [];
  for (const endpoint of endpoints) {
    const gate = gates.admit(endpoint, context);
    if (gate.kind === 'send') admitted.push({ endpoint, probe: gate.probe });
    else deferred.push({ endpoint: endpoint.ref, reason: gate.reason, until: gate.until });
  }
  return { admitted, deferred };
}

export interface RequestDeps {
  client: WebhookClient;
  metrics: DelivererMetrics;
  gates: EndpointGates;
  now: () => number;
  onTimeout?: (request: TimedOutRequest) => void;
  /** Told of every request held back because its destination was judged stalled or slow. */
  onHeldBack?: (destinationId: string, cap: DestinationCap) => void;
}

/** The request `sendRequest` makes to an admitted endpoint, and the destination it counts against. */
export interface OutgoingRequest {
  destinationId: string;
  /** The destination's cap on requests in flight: the request takes one of its slots. */
  cap: DestinationCap;
  request: WebhookRequest;
  /** Names it in the timeout log: the message or batch id. */
  id: string;
}

/**
 * One request to one admitted endpoint, a single event's or a batch's: it takes a slot of the
 * destination's cap (or is deferred as `destination_stalled`), and its result counts once in the
 * metrics and the endpoint's gate.
 */
export async function sendRequest(deps: RequestDeps, admitted: Admitted, outgoing: OutgoingRequest): Promise<Outcome> {
  const { cap, destinationId, request, id } = outgoing;
  const { endpoint, probe } = admitted;
  let slot = cap.acquire();
  if (slot !== true && slot !== false) slot = await slot;
  if (!slot) {
    deps.gates.cancel(destinationId, endpoint.url, admitted);
    deps.onHeldBack?.(destinationId, cap);
    return { endpoint: endpoint.ref, reason: 'destination_stalled', until: deps.now() };
  }
  const sentAt = deps.now();
  let timedOut = false;
  // The destination is judged by its endpoints' answer times: a wait for one of this process's own
  // pooled connections (a destination with more requests in flight than connections) is not the
  // endpoint's slowness, and would make a busy healthy destination look slow beside a quiet one.
  let queuedMs = 0;
  try {
    const result = await deps.client.send(request);
    queuedMs = result.connectionWaitMs ?? 0;
    timedOut = result.error === TIMEOUT_CODE;
    deps.metrics.attempt(destinationId, result);
    if (timedOut) deps.onTimeout?.({ destinationId, url: endpoint.url, messageId: id, timeoutMs: request.timeoutMs });
    deps.gates.record(result, { destinationId, probe, now: deps.now() });
    // From here on the endpoint is named by its ref: results go into records and `lastError`.
    return { ...result, endpoint: endpoint.ref };
  } finally {
    cap.release(Math.max(0, deps.now() - sentAt - queuedMs), timedOut ? 'timed-out' : 'finished');
  }
}
