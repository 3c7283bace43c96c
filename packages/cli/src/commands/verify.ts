import { verifySignature } from '@sluice/webhook-signature';
import { CliError, type CliIo } from '../io.ts';

/**
 * `sluice verify --secret S --signature H < body.json`: HMAC-SHA1 over the exact stdin bytes
 * (docs/reference/delivery.md).
 */
export async function verify(io: CliIo, options: { secret: string; signature: string }): Promise<void> {
  const body = await io.readStdin();
  if (!verifySignature(options.secret, body, options.signature)) throw new CliError('invalid');
  io.stdout('valid\n');
}
