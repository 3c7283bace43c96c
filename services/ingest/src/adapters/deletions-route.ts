import type { IncomingMessage } from 'node:http';
import { recordKey } from '@sluice/envelope';
import { ingestSettings } from '../config.ts';
import { deletionEnvelopes, parseDeletionRequest } from '../domain/deletion.ts';
import { tokenMatches } from '../domain/write-keys.ts';
import { KafkaUnavailableError, NotFoundError, UnauthorizedError } from '../errors.ts';
import type { ApiDeps } from './api-deps.ts';
import { parseJsonBody } from './json.ts';
import { checkContentType, readBody } from './read-body.ts';

function bearer(header: string | undefined): string | undefined {
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}

/**
 * `POST /v1/deletions` (docs/reference/deletions.md): behind `ingest.adminToken` (404 when none is configured),
 * emits one `delete` envelope per affected source and answers `202 { id }` after the ack.
 */
export async function handleDeletion(deps: ApiDeps, req: IncomingMessage): Promise<{ status: number; body: string }> {
  const config = deps.config.current;
  const settings = ingestSettings(config);
  if (!settings.adminToken) {
    req.resume();
    throw new NotFoundError();
  }
  if (!tokenMatches(settings.adminToken, bearer(req.headers.authorization))) {
    req.resume();
    throw new UnauthorizedError('missing or wrong admin token');
  }
  checkContentType(req);
  const request = parseDeletionRequest(parseJsonBody(await readBody(req, settings.maxBodyBytes)));
  const id = deps.newId();
  const envelopes = deletionEnvelopes(config, request, id, deps.now());
  const records = await Promise.all(
    envelopes.map(async (e) => ({
      topic: settings.topics.events,
      message: { key: recordKey(e), value: await deps.codec.encode(e) },
    })),
  );
  try {
    await deps.sender.send(records, settings.produceTimeoutMs);
  } catch (err) {
    throw new KafkaUnavailableError(err);
  }
  deps.metrics.deletions.inc({ kind: 'request' });
  deps.metrics.deletions.inc({ kind: 'notification' }, envelopes.length);
  deps.logger.info({ deletionId: id, sources: envelopes.map((e) => e.sourceId) }, 'deletion request accepted');
  return { status: 202, body: JSON.stringify({ id }) };
}
