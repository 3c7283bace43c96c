import type { ValueCodec } from '@sluice/codec';
import type { Snapshot } from '@sluice/envelope';
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConfigStore } from '@sluice/config';
import type { SafeProducer } from '@sluice/kafka';
import type { RequestHandler } from '@sluice/service-kit';
import { MAX_CHUNK_BYTES, ROUTES } from '../constants.ts';
import { parseSnapshot, snapshotKey, snapshotToWire, type SyncKind } from '../domain/snapshot.ts';
import { AudienceSyncError, BadRequestError, ProduceFailedError, UnauthorizedError } from '../errors.ts';
import type { AudienceSyncMetrics } from '../metrics.ts';

const KIND_BY_ROUTE: Record<string, SyncKind> = { [ROUTES.audiences]: 'audience', [ROUTES.traits]: 'trait' };

/**
 * The snapshot API: `POST /v1/audiences/snapshots` and `POST /v1/traits/snapshots`, one chunk per
 * request, behind the admin token (`Authorization: Bearer <ingest.adminToken>`; without a token in
 * the config the API answers 404, like ingest's admin API). A valid chunk is written onto
 * `sluice.audiences` and answered `202` only once Kafka acknowledged it (acks = -1): the topic
 * consumer does the diffing, so HTTP and topic input share one path.
 */
export function createSnapshotApi(deps: {
  producer: SafeProducer;
  config: ConfigStore;
  metrics: AudienceSyncMetrics;
  /** Encodes chunks for `sluice.audiences` (JSON, or the Confluent wire format with a registry). */
  codec: ValueCodec<Snapshot>;
  produceTimeoutMs?: number;
}): RequestHandler {
  return async (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const kind = KIND_BY_ROUTE[path];
    const config = deps.config.current;
    if (!kind || !config.ingest.adminToken)
      return send(res, 404, { success: false, code: 'not_found', message: 'no such route' });
    if (req.method !== 'POST')
      return send(res, 405, { success: false, code: 'method_not_allowed', message: 'use POST' }, { allow: 'POST' });
    try {
      if (!authorised(req, config.ingest.adminToken)) throw new UnauthorizedError();
      const body = await readJson(req);
      const parsed = parseSnapshot(body, (id) => config.sources.some((s) => s.id === id), kind);
      if (!parsed.ok) {
        deps.metrics.snapshotsRejected.inc({ code: parsed.error.code, via: 'http' });
        return send(res, 400, {
          success: false,
          code: parsed.error.code,
          field: parsed.error.field,
          message: parsed.error.message,
        });
      }
      const { chunk } = parsed;
      try {
        await deps.producer.send(
          config.kafka.topics.audiences,
          [
            {
              key: snapshotKey(chunk.target),
              value: await deps.codec.encode(snapshotToWire(chunk) as unknown as Snapshot),
            },
          ],
          deps.produceTimeoutMs ?? config.ingest.produceTimeoutMs,
        );
      } catch (err) {
        throw new ProduceFailedError(`chunk not acknowledged by Kafka: ${(err as Error).message}`);
      }
      send(res, 202, { success: true, syncId: chunk.syncId, final: chunk.final });
    } catch (err) {
      if (!(err instanceof AudienceSyncError)) throw err;
      const status =
        err instanceof UnauthorizedError
          ? 401
          : err instanceof BadRequestError
            ? err.status
            : err.retryable
              ? 503
              : 400;
      if (status !== 401) deps.metrics.snapshotsRejected.inc({ code: err.code, via: 'http' });
      send(res, status, { success: false, code: err.code, message: err.message });
    }
  };
}

function authorised(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? '';
  const match = /^Bearer\s+(.+)$/i.exec(header);
  if (!match) return false;
  const given = Buffer.from(match[1]!.trim());
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json')
    throw new BadRequestError('unsupported_media_type', 'Content-Type must be application/json', 415);
  // Read to the end even when too large, so the 400 can still be sent on the same connection.
  const body = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (part: Buffer) => {
      size += part.length;
      if (size <= MAX_CHUNK_BYTES) chunks.push(part);
    });
    req.on('end', () =>
      size > MAX_CHUNK_BYTES
        ? reject(
            new BadRequestError(
              'chunk_too_large',
              `a snapshot chunk is limited to ${MAX_CHUNK_BYTES} bytes; split it into more chunks`,
            ),
          )
        : resolve(Buffer.concat(chunks)),
    );
    req.on('error', reject);
  });
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new BadRequestError('invalid_json', 'body is not valid JSON');
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
