import { CliError, type CliIo } from '../io.ts';
import { buildTestCall, type TestCallOptions } from '../domain/test-call.ts';

export interface SendOptions extends TestCallOptions {
  endpoint: string;
  writeKey: string;
}

/** `sluice send`: POSTs one test call to ingest (`/v1/<type>`, Basic auth with the write key). */
export async function send(io: CliIo, options: SendOptions): Promise<void> {
  const call = buildTestCall(options);
  const url = `${options.endpoint.replace(/\/+$/, '')}/v1/${options.type}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Basic ${Buffer.from(`${options.writeKey}:`).toString('base64')}`,
      },
      body: JSON.stringify(call),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (err) {
    throw new CliError(
      `cannot reach ${url}: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`,
    );
  }
  const text = await res.text();
  let parsed: { success?: boolean; rejected?: unknown[] } | undefined;
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    parsed = undefined;
  }
  const ok = res.ok && parsed?.success === true && !(parsed.rejected && parsed.rejected.length > 0);
  const line = `${res.status} ${text.trim()}`;
  if (!ok) throw new CliError(`not accepted: ${line}`);
  io.stdout(`sent ${options.type} to ${url}: ${line}\n`);
}
