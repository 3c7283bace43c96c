import type { SluiceConfig } from '@sluice/config';
import type { EventEnvelope } from '@sluice/envelope';
import { InvalidBodyError } from '../errors.ts';

export interface DeletionRequest {
  userId: string;
  sourceIds?: string[];
}

/** Validates the body of `POST /v1/deletions` (docs/reference/deletions.md). */
export function parseDeletionRequest(body: unknown): DeletionRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new InvalidBodyError('body must be a JSON object');
  const { userId, sourceIds } = body as Record<string, unknown>;
  if (typeof userId !== 'string' || userId.length === 0)
    throw new InvalidBodyError('userId must be a non-empty string');
  if (sourceIds === undefined) return { userId };
  if (!Array.isArray(sourceIds) || !sourceIds.every((s) => typeof s === 'string'))
    throw new InvalidBodyError('sourceIds must be an array of strings');
  return { userId, sourceIds };
}

/**
 * One `delete` envelope per affected source that has an enabled webhooks destination (docs/reference/deletions.md);
 * its `messageId` is the deletion id, which the deliverer sends as `X-Message-Id` (docs/reference/delivery.md).
 * Unknown source ids are refused rather than silently skipped [decision].
 */
export function deletionEnvelopes(
  config: SluiceConfig,
  request: DeletionRequest,
  deletionId: string,
  nowMs: number,
): EventEnvelope[] {
  const known = new Set(config.sources.map((s) => s.id));
  const unknown = (request.sourceIds ?? []).filter((id) => !known.has(id));
  if (unknown.length > 0) throw new InvalidBodyError(`unknown sourceIds: ${unknown.join(', ')}`);
  const wanted = request.sourceIds ? new Set(request.sourceIds) : known;
  const withDestination = new Set(
    config.destinations.filter((d) => d.enabled && d.type === 'webhooks').flatMap((d) => d.sourceIds),
  );
  const at = new Date(nowMs).toISOString();
  return [...wanted]
    .filter((sourceId) => withDestination.has(sourceId))
    .map((sourceId) => ({
      sourceId,
      type: 'delete',
      messageId: deletionId,
      userId: request.userId,
      timestamp: at,
      receivedAt: at,
    }));
}
