import type { IncomingMessage } from 'node:http';
import { recordKey, rejectedRecord, type CallType } from '@sluice/envelope';
import type { SluiceConfig } from '@sluice/config';
import { ingestSettings } from '../config.ts';
import type { CallRejection } from '../domain/call-rejection.ts';
import { normaliseCall } from '../domain/normalise-call.ts';
import { splitBody } from '../domain/request-body.ts';
import { writeKeyFromAuthorization, WriteKeyIndex } from '../domain/write-keys.ts';
import { KafkaUnavailableError, RateLimitedError, UnauthorizedError } from '../errors.ts';
import type { ApiDeps } from './http-api.ts';
import { clientIp } from './client-ip.ts';
import { parseJsonBody } from './json.ts';
import type { OutgoingRecord } from './lingering-sender.ts';
import { checkContentType, readBody } from './read-body.ts';
import type { RateLimiter } from '../domain/token-bucket.ts';

const keyIndexes = new WeakMap<SluiceConfig, WriteKeyIndex>();
function keyIndex(config: SluiceConfig): WriteKeyIndex {
  let index = keyIndexes.get(config);
  if (!index) keyIndexes.set(config, (index = new WriteKeyIndex(config.sources)));
  return index;
}

/**
 * One tracking request (SPEC §3): authenticate, read and split the body, validate and normalise
 * each call, then answer only after Kafka acknowledged the accepted and the rejected records.
 */
export async function handleTracking(
  deps: ApiDeps & { rateLimiter: RateLimiter },
  req: IncomingMessage,
  route: CallType | 'batch',
): Promise<{ status: number; body: string }> {
  const config = deps.config.current;
  const settings = ingestSettings(config);
  const receivedAt = deps.now();
  const keys = keyIndex(config);
  const headerKey = writeKeyFromAuthorization(req.headers.authorization);
  // A wrong key in the header is refused before the body is read.
  let sourceId = headerKey !== undefined ? keys.sourceFor(headerKey) : undefined;
  if (headerKey !== undefined && !sourceId) {
    req.resume();
    throw new UnauthorizedError();
  }
  checkContentType(req);
  const raw = await readBody(req, settings.maxBodyBytes);
  const body = splitBody(parseJsonBody(raw), settings.maxCalls);
  sourceId ??= keys.sourceFor(body.writeKey);
  if (!sourceId) throw new UnauthorizedError();

  const source = config.sources.find((s) => s.id === sourceId);
  const allowed = deps.rateLimiter.take(sourceId, source?.rateLimit, body.calls.length, receivedAt);
  if (!allowed.ok) throw new RateLimitedError(allowed.retryAfterSeconds);

  const ip = clientIp(req, settings.trustProxy);
  const facts = {
    sourceId,
    receivedAt,
    ...(ip !== undefined && { ip }),
    ...(body.context && { batchContext: body.context }),
    ...(body.integrations && { batchIntegrations: body.integrations }),
    ...(body.sentAt !== undefined && { batchSentAt: body.sentAt }),
    ...(route !== 'batch' && !body.isBatch && { routeType: route }),
    maxCallBytes: settings.maxCallBytes,
    skipSizeCheck: raw.length <= settings.maxCallBytes,
    newMessageId: deps.newId,
  };
  const records: OutgoingRecord[] = [];
  const rejections: CallRejection[] = [];
  const counts = new Map<string, number>();
  for (let index = 0; index < body.calls.length; index++) {
    const call = body.calls[index];
    const result = normaliseCall(call, index, facts);
    if (result.ok) {
      const envelope = result.envelope;
      records.push({ topic: settings.topics.events, message: { key: recordKey(envelope), value: await deps.codec.encode(envelope) } });
      counts.set(envelope.type, (counts.get(envelope.type) ?? 0) + 1);
    } else {
      const { code, message } = result.rejection;
      rejections.push(result.rejection);
      records.push({
        topic: settings.topics.rejected,
        message: rejectedRecord({ origin: 'ingest', code, message, value: JSON.stringify(call ?? null), sourceId, index }),
      });
    }
  }

  try {
    await deps.sender.send(records, settings.produceTimeoutMs);
  } catch (err) {
    deps.metrics.produceFailures.inc();
    throw new KafkaUnavailableError(err);
  }

  for (const [type, n] of counts) deps.metrics.events.inc({ source: sourceId, type, outcome: 'accepted' }, n);
  for (const r of rejections) {
    const call = body.calls[r.index] as { type?: unknown } | null;
    const type = typeof call?.type === 'string' && call.type.length <= 20 ? call.type : route === 'batch' ? 'unknown' : route;
    deps.metrics.events.inc({ source: sourceId, type, outcome: 'rejected' });
    deps.metrics.rejected.inc({ reason: r.code });
  }
  const accepted = records.length - rejections.length;
  const response = rejections.length > 0 ? { success: true, accepted, rejected: rejections } : { success: true, accepted };
  return { status: 200, body: JSON.stringify(response) };
}
