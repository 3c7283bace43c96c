import { StringDecoder } from 'node:string_decoder';
import type { DestinationTestAnswer } from '@sluice/log-api';
import { escapeControls, redactUrlsIn } from '@sluice/logging';
import { DeliveryTimeoutError, type SingleAnswer, SsrfBlockedError, WebhookError } from '@sluice/webhook';

/** Which endpoint a test event went to, under which ids, and what it got. */
export interface TestOutcome {
  destinationId: string;
  endpoint: number;
  /** The endpoint's redacted URL (`Endpoint.ref`). */
  url: string;
  messageId: string;
  batchId?: string;
  sent: SingleAnswer;
}

/** The answer of a destination test (docs/reference/runtime-destinations.md, "Test event"). */
export function testAnswer(outcome: TestOutcome): DestinationTestAnswer {
  const { sent, batchId } = outcome;
  const status = sent.status ?? null;
  return {
    destinationId: outcome.destinationId,
    endpoint: outcome.endpoint,
    url: outcome.url,
    messageId: outcome.messageId,
    ...(batchId !== undefined && { batchId }),
    status,
    ok: status !== null && status >= 200 && status < 300,
    latencyMs: sent.latencyMs,
    ...(sent.error !== undefined && { error: failureText(sent.error) }),
    body: answerText(sent.body),
    truncated: sent.truncated,
  };
}

/**
 * The first bytes of an answer as text: UTF-8 (a character cut at the end left out, an invalid
 * byte as U+FFFD), control characters escaped (`\xHH`), so the text is safe to show anywhere.
 */
export function answerText(bytes: Buffer): string {
  return escapeControls(new StringDecoder('utf8').write(bytes));
}

/** Why a test event got no answer, in a sentence: the SSRF policy, the deadline, or the error with its code. */
export function failureText(error: Error): string {
  if (error instanceof SsrfBlockedError)
    return `refused by the SSRF policy: ${error.address} is a ${error.range} address, not in delivery.ssrf.allowCidrs`;
  if (error instanceof DeliveryTimeoutError) return `timed out after ${error.timeoutMs} ms (delivery.timeout)`;
  if (error instanceof WebhookError) return error.message;
  const { code } = error as { code?: unknown };
  const message = error.message.trim();
  if (typeof code !== 'string') return redactUrlsIn(message || 'the request failed');
  return redactUrlsIn(message === '' ? code : message.includes(code) ? message : `${code}: ${message}`);
}
