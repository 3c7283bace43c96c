import type { IncomingMessage } from 'node:http';
import { isCallType, recordKey, rejectedRecord, type CallType, type JsonObject } from '@sluice/envelope';
import type { SluiceConfig } from '@sluice/config';
import { ingestSettings } from '../config.ts';
import type { CallRejection } from '../domain/call-rejection.ts';
import { buildEnvelope, checkCall, sizeRejection, type RequestFacts } from '../domain/normalise-call.ts';
import { rejectedCallValue } from '../domain/rejected-call.ts';
import { spliceEnvelope } from '../domain/envelope-splice.ts';
import { callLayout, type CallLayout } from '../domain/json-members.ts';
import { splitBody, type RequestBody } from '../domain/request-body.ts';
import { writeKeyFromAuthorization, WriteKeyIndex } from '../domain/write-keys.ts';
import { KafkaUnavailableError, RateLimitedError, UnauthorizedError } from '../errors.ts';
import type { ApiDeps } from './api-deps.ts';
import { clientIp } from './client-ip.ts';
import { parseJsonWithText } from './json.ts';
import type { OutgoingRecord } from './lingering-sender.ts';
import { checkContentType, readBody } from './read-body.ts';
import type { RateLimiter } from '../domain/rate-limiter.ts';
import type { TraceHeaders } from '@sluice/tracing';

/**
 * The trace context the accepted records carry (their `traceparent`/`tracestate` headers), and,
 * when tracing is on, the produce span to end once Kafka answered.
 */
export interface ProduceTrace {
  headers: TraceHeaders | undefined;
  /** Called once the records were acknowledged, or with why not. */
  end?(error?: string): void;
}

const keyIndexes = new WeakMap<SluiceConfig, WriteKeyIndex>();
function keyIndex(config: SluiceConfig): WriteKeyIndex {
  let index = keyIndexes.get(config);
  if (!index) keyIndexes.set(config, (index = new WriteKeyIndex(config.sources)));
  return index;
}

/**
 * One tracking request (docs/reference/tracking-api.md): authenticate, read and split the body, validate and normalise
 * each call, then answer only after Kafka acknowledged the accepted and the rejected records.
 */
export async function handleTracking(
  deps: ApiDeps & { rateLimiter: RateLimiter },
  req: IncomingMessage,
  route: CallType | 'batch',
  trace?: TraceHeaders | ((sourceId: string) => ProduceTrace),
): Promise<{ status: number; body: string }> {
  // Two frames: nothing of the body is held while the request waits for the ack.
  const { sourceId, queued, produce } = await acceptRequest(deps, req, route, trace);
  try {
    await queued.acked;
  } catch (err) {
    deps.metrics.produceFailures.inc();
    produce?.end?.((err as Error).message);
    throw new KafkaUnavailableError(err);
  }
  produce?.end?.();
  const { outcome } = queued;
  for (const [type, n] of outcome.acceptedByType)
    deps.metrics.events.inc({ source: sourceId, type, outcome: 'accepted' }, n);
  for (const { type, code } of outcome.rejectedTypes) {
    deps.metrics.events.inc({ source: sourceId, type, outcome: 'rejected' });
    deps.metrics.rejected.inc({ reason: code });
  }
  const { accepted, rejections } = outcome;
  const response =
    rejections.length > 0 ? { success: true, accepted, rejected: rejections } : { success: true, accepted };
  return { status: 200, body: JSON.stringify(response) };
}

/** Authenticates, reads, splits and checks a request, then queues its records. */
async function acceptRequest(
  deps: ApiDeps & { rateLimiter: RateLimiter },
  req: IncomingMessage,
  route: CallType | 'batch',
  trace: TraceHeaders | ((sourceId: string) => ProduceTrace) | undefined,
) {
  const config = deps.config.current;
  const settings = ingestSettings(config);
  const receivedAt = deps.now();
  const keys = keyIndex(config);
  const headerKey = writeKeyFromAuthorization(req.headers.authorization);
  // A wrong key in the header is refused before the body is read.
  let source = headerKey !== undefined ? keys.sourceFor(headerKey) : undefined;
  if (headerKey !== undefined && !source) {
    req.resume();
    throw new UnauthorizedError();
  }
  checkContentType(req);
  const raw = await readBody(req, settings.maxBodyBytes);
  const parsed = parseJsonWithText(raw);
  const body = splitBody(parsed.value, settings.maxCalls);
  source ??= keys.sourceFor(body.writeKey);
  if (!source) throw new UnauthorizedError();

  const sourceId = source.id;
  const allowed = deps.rateLimiter.take(sourceId, source.rateLimit, body.calls.length, receivedAt);
  if (!allowed.ok) throw new RateLimitedError(allowed.retryAfterSeconds);

  const facts = requestFacts(req, settings, body, sourceId, receivedAt, route, deps.newId);
  const layout =
    deps.codec.format === 'json' && parsed.text !== undefined
      ? callLayout(parsed.text, parsed.value as JsonObject, body.calls)
      : undefined;
  const produce = typeof trace === 'function' ? trace(sourceId) : trace && { headers: trace };
  const queued = await queueRecords(deps, settings, facts, body.calls, route, layout, produce?.headers);
  return { sourceId, queued, produce };
}

/** What the response and the metrics need once Kafka acknowledged a request's records. */
interface RequestOutcome {
  accepted: number;
  rejections: CallRejection[];
  acceptedByType: Map<string, number>;
  /** Per rejected call: the type label for the metrics (a call type or `unknown`) and the reason code. */
  rejectedTypes: { type: string; code: string }[];
}

function requestFacts(
  req: IncomingMessage,
  settings: ReturnType<typeof ingestSettings>,
  body: RequestBody,
  sourceId: string,
  receivedAt: number,
  route: CallType | 'batch',
  newMessageId: () => string,
): RequestFacts {
  const ip = clientIp(req, settings.trustProxy);
  return {
    sourceId,
    receivedAt,
    ...(ip !== undefined && { ip }),
    ...(body.context && { batchContext: body.context }),
    ...(body.integrations && { batchIntegrations: body.integrations }),
    ...(body.sentAt !== undefined && { batchSentAt: body.sentAt }),
    ...(route !== 'batch' && !body.isBatch && { routeType: route }),
    maxCallBytes: settings.maxCallBytes,
    newMessageId,
  };
}

/**
 * Normalises every call, encodes the records and hands them to the sender. Returns the
 * sender's promise wrapped (not awaited) with the outcome, so that the parsed body and the
 * records are garbage as soon as they are queued: a request waits ~100 ms for its ack under
 * load, and anything it still held then would be copied by every young-generation GC.
 */
async function queueRecords(
  deps: ApiDeps,
  settings: ReturnType<typeof ingestSettings>,
  facts: RequestFacts,
  calls: unknown[],
  route: CallType | 'batch',
  layout: CallLayout | undefined,
  headers: TraceHeaders | undefined,
): Promise<{ acked: Promise<void>; outcome: RequestOutcome }> {
  const records: OutgoingRecord[] = [];
  const outcome: RequestOutcome = { accepted: 0, rejections: [], acceptedByType: new Map(), rejectedTypes: [] };
  for (let index = 0; index < calls.length; index++) {
    const call = calls[index];
    const members = layout?.calls[index];
    let result = checkCall(call, index, facts);
    if (result.ok) {
      const { checked } = result;
      // The spliced text goes to the producer thread as it is (packed there once, as UTF-8). The
      // size limit applies to what is stored: text copied as sent may carry white space or long
      // number spellings, so a spliced envelope over the limit is serialised again, compactly.
      let value: Buffer | string | undefined = members
        ? spliceEnvelope(layout!.text, members, checked, facts)
        : undefined;
      if (value === undefined || sizeRejection(value, index, facts.maxCallBytes))
        value = await deps.codec.encode(buildEnvelope(checked, facts));
      const tooLarge = sizeRejection(value, index, facts.maxCallBytes);
      if (tooLarge) {
        result = tooLarge;
      } else {
        const key = recordKey({
          sourceId: facts.sourceId,
          userId: checked.userId ?? null,
          anonymousId: checked.anonymousId,
        });
        records.push({ topic: settings.topics.events, message: headers ? { key, value, headers } : { key, value } });
        outcome.accepted += 1;
        outcome.acceptedByType.set(checked.type, (outcome.acceptedByType.get(checked.type) ?? 0) + 1);
        continue;
      }
    }
    const { code, message } = result.rejection;
    outcome.rejections.push(result.rejection);
    // Label values come from closed sets only: a call type, or `unknown`.
    const type = route === 'batch' ? (call as { type?: unknown } | null)?.type : route;
    outcome.rejectedTypes.push({ type: isCallType(type) ? type : 'unknown', code });
    const value = rejectedCallValue(call, layout?.text, members);
    records.push({
      topic: settings.topics.rejected,
      message: rejectedRecord({
        origin: 'ingest',
        code,
        message: value.note ? `${message}; ${value.note}` : message,
        value: value.text,
        sourceId: facts.sourceId,
        index,
      }),
    });
  }
  // Caught by the caller's await; marked handled here so a failure cannot surface before it.
  const acked = deps.sender.send(records, settings.produceTimeoutMs);
  acked.catch(() => {});
  return { acked, outcome };
}
