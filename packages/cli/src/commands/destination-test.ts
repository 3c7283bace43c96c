import { type DestinationTestAnswer, destinationTestAnswer } from '@sluice/log-api';
import { printable, printableJson } from '../domain/printable.ts';
import { CliError, type CliIo } from '../io.ts';
import { logApiCheckedCall } from '../log-api.ts';

export interface DestinationTestFlags {
  /** The endpoint's index in the destination, as text from the command line; default 0 (by the API). */
  endpoint?: string;
  json?: boolean;
}

/** The test as lines for the terminal: where it went, what came back, the answer's first bytes. */
function describeTest(answer: DestinationTestAnswer): string {
  const where = `${printable(answer.destinationId)} endpoint ${answer.endpoint} (${printable(answer.url)})`;
  const outcome =
    answer.status === null
      ? `no answer after ${answer.latencyMs} ms: ${printable(answer.error ?? 'unknown error')}`
      : `${answer.status} in ${answer.latencyMs} ms`;
  const ids = `messageId ${printable(answer.messageId)}${answer.batchId === undefined ? '' : `, batchId ${printable(answer.batchId)}`}`;
  const lines = [`${where}: ${outcome}`, ids];
  if (answer.body !== '')
    lines.push(`answer${answer.truncated ? ' (first bytes; there was more)' : ''}:`, printable(answer.body));
  return `${lines.join('\n')}\n`;
}

/**
 * `sluice destinations test <id> [--endpoint N]`: one signed test event sent by the delivery log to
 * one endpoint (`POST …/<id>/test`); prints what the endpoint answered and exits 1 unless it was a 2xx.
 */
export async function destinationTest(io: CliIo, id: string, flags: DestinationTestFlags): Promise<void> {
  if (flags.endpoint !== undefined && !/^\d{1,4}$/.test(flags.endpoint))
    throw new CliError(`--endpoint must be an endpoint's index (0 is the first), got ${printable(flags.endpoint)}`, 2);
  const body = flags.endpoint === undefined ? {} : { endpoint: Number(flags.endpoint) };
  const path = `/api/v1/destination-definitions/${encodeURIComponent(id)}/test`;
  const answer = await logApiCheckedCall(io, { method: 'POST', path, body }, destinationTestAnswer);
  io.stdout(flags.json ? `${printableJson(answer)}\n` : describeTest(answer));
  if (!answer.ok)
    throw new CliError(
      answer.status === null ? 'the test event got no answer' : `the endpoint answered ${answer.status}, not a 2xx`,
    );
}
