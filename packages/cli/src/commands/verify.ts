import { parseDuration } from '@sluice/config';
import { checkBatchDocument } from '../domain/batch-document.ts';
import { printable } from '../domain/printable.ts';
import { DEFAULT_TOLERANCE_MS, verifyRequest, type VerifyScheme } from '../domain/verify-request.ts';
import { CliError, type CliIo } from '../io.ts';

export interface VerifyOptions {
  secret: string;
  signature: string;
  scheme?: VerifyScheme;
  webhookId?: string;
  webhookTimestamp?: string;
  /** A duration (`30s`, `5m`; a bare number is milliseconds); default 5m. */
  tolerance?: string;
  /** The `X-Batch-Id` header: the body is then checked as a batch document and its ids printed. */
  batchId?: string;
  /** The `X-Batch-Size` header: must be the number of events in the body. */
  batchSize?: number;
}

/**
 * `sluice verify --secret S --signature H < body.json`: checks an `X-Signature` (hex HMAC-SHA1)
 * or, with `--webhook-id` and `--webhook-timestamp`, a Standard Webhooks `webhook-signature`, over
 * the exact stdin bytes (docs/receiving-webhooks.md). With `--batch-id`, the body is a batch
 * (docs/reference/batches.md): the signature covers the whole of it, the batch id is the
 * `webhook-id`, and the document must be a batch of that id; its message ids are printed.
 */
export async function verify(io: CliIo, options: VerifyOptions): Promise<void> {
  const body = await io.readStdin();
  const { batchId } = options;
  if (batchId !== undefined && options.webhookId !== undefined && options.webhookId !== batchId)
    throw new CliError('invalid: webhook-id is not the batch id (X-Batch-Id)');
  const webhookId = options.webhookId ?? batchId;
  const outcome = verifyRequest({
    secret: options.secret,
    signature: options.signature,
    ...(options.scheme !== undefined && { scheme: options.scheme }),
    ...(webhookId !== undefined && { id: webhookId }),
    ...(options.webhookTimestamp !== undefined && { timestamp: options.webhookTimestamp }),
    toleranceMs: options.tolerance === undefined ? DEFAULT_TOLERANCE_MS : toleranceMs(options.tolerance),
    nowMs: Date.now(),
    body,
  });
  if (!outcome.ok) throw new CliError(outcome.scheme === 'x-signature' ? 'invalid' : `invalid: ${outcome.problem}`);
  if (batchId === undefined) return io.stdout('valid\n');
  const batch = checkBatchDocument(body, batchId, options.batchSize);
  if (!batch.ok) throw new CliError(`invalid batch: ${batch.problem}`);
  const ids = batch.messageIds.map((id) => `${printable(id)}\n`).join('');
  const n = batch.messageIds.length;
  io.stdout(`valid\nbatch ${printable(batchId)}: ${n} event${n === 1 ? '' : 's'}\n${ids}`);
}

function toleranceMs(value: string): number {
  try {
    return /^\d+$/.test(value) ? Number(value) : parseDuration(value);
  } catch {
    throw new CliError(`--tolerance must be a duration such as 30s or 5m, got ${JSON.stringify(value)}`);
  }
}
