import { parseDuration } from '@sluice/config';
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
}

/**
 * `sluice verify --secret S --signature H < body.json`: checks an `X-Signature` (hex HMAC-SHA1)
 * or, with `--webhook-id` and `--webhook-timestamp`, a Standard Webhooks `webhook-signature`, over
 * the exact stdin bytes (docs/receiving-webhooks.md).
 */
export async function verify(io: CliIo, options: VerifyOptions): Promise<void> {
  const body = await io.readStdin();
  const outcome = verifyRequest({
    secret: options.secret,
    signature: options.signature,
    ...(options.scheme !== undefined && { scheme: options.scheme }),
    ...(options.webhookId !== undefined && { id: options.webhookId }),
    ...(options.webhookTimestamp !== undefined && { timestamp: options.webhookTimestamp }),
    toleranceMs: options.tolerance === undefined ? DEFAULT_TOLERANCE_MS : toleranceMs(options.tolerance),
    nowMs: Date.now(),
    body,
  });
  if (!outcome.ok) throw new CliError(outcome.scheme === 'x-signature' ? 'invalid' : `invalid: ${outcome.problem}`);
  io.stdout('valid\n');
}

function toleranceMs(value: string): number {
  try {
    return /^\d+$/.test(value) ? Number(value) : parseDuration(value);
  } catch {
    throw new CliError(`--tolerance must be a duration such as 30s or 5m, got ${JSON.stringify(value)}`);
  }
}
