/**
 * A batch request's body as a receiver checks it (docs/receiving-webhooks.md, "Receiving a
 * batch"): `{"batchId":"…","messageIds":[…],"events":[…]}`, the batch id the one of its
 * `X-Batch-Id` header, one unique message id per event.
 */
export type BatchDocument = { ok: true; messageIds: string[] } | { ok: false; problem: string };

export function checkBatchDocument(body: Buffer, batchId: string, batchSize?: number): BatchDocument {
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, problem: 'the body is not JSON' };
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    return { ok: false, problem: 'the body is not a JSON object' };
  const { batchId: id, messageIds, events } = doc as Record<string, unknown>;
  if (id !== batchId) return { ok: false, problem: 'the body\'s "batchId" is not the X-Batch-Id header' };
  if (!Array.isArray(messageIds)) return { ok: false, problem: '"messageIds" is not an array' };
  if (!Array.isArray(events)) return { ok: false, problem: '"events" is not an array' };
  if (messageIds.length !== events.length)
    return {
      ok: false,
      problem: `"messageIds" and "events" differ in length (${messageIds.length} and ${events.length})`,
    };
  if (messageIds.length === 0) return { ok: false, problem: 'the batch holds no event' };
  const seen = new Set<string>();
  for (const [i, messageId] of messageIds.entries()) {
    if (typeof messageId !== 'string' || messageId.length === 0)
      return { ok: false, problem: `messageIds[${i}] is not a non-empty string` };
    if (seen.has(messageId)) return { ok: false, problem: `messageIds[${i}] repeats an earlier id` };
    seen.add(messageId);
  }
  if (batchSize !== undefined && batchSize !== events.length)
    return { ok: false, problem: `X-Batch-Size is ${batchSize}, the body holds ${events.length} events` };
  return { ok: true, messageIds: messageIds as string[] };
}
