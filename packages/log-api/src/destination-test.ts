import { answerGuard, isCount, isText, type Check } from './answer-guard.ts';

/** The answer of `POST /api/v1/destination-definitions/{id}/test`: one test event sent to one endpoint. */
export interface DestinationTestAnswer {
  destinationId: string;
  /** The endpoint's index in the destination's endpoints. */
  endpoint: number;
  /** The endpoint's URL redacted, as attempts name it. */
  url: string;
  /** The test event's id (`X-Message-Id`). */
  messageId: string;
  /** The batch of one it went in, when the destination batches (`X-Batch-Id`). */
  batchId?: string;
  /** The answer's status; null when no answer came. */
  status: number | null;
  /** A 2xx answer. */
  ok: boolean;
  /** To the answer's headers, or to the failure. */
  latencyMs: number;
  /** Why no answer came: refused by the SSRF policy, the deadline, a connection or TLS error. */
  error?: string;
  /** The answer's first bytes as text, control characters escaped. */
  body: string;
  /** The answer had more bytes than `body` shows. */
  truncated: boolean;
}

const optional =
  (check: Check): Check =>
  (value, path) =>
    value === undefined ? undefined : check(value, path);
const isBoolean: Check = (value, path) => (typeof value === 'boolean' ? undefined : path);
const isMs: Check = (value, path) => (typeof value === 'number' && value >= 0 ? undefined : path);
const isStatus: Check = (value, path) => (value === null ? undefined : isCount(value, path));

/** Checks an answer of `POST /api/v1/destination-definitions/{id}/test`. */
export const destinationTestAnswer = answerGuard<DestinationTestAnswer>({
  destinationId: isText,
  endpoint: isCount,
  url: isText,
  messageId: isText,
  batchId: optional(isText),
  status: isStatus,
  ok: isBoolean,
  latencyMs: isMs,
  error: optional(isText),
  body: isText,
  truncated: isBoolean,
});
