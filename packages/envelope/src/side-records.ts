/**
 * Records Sluice writes beside the main flow: rejected input on `sluice.rejected` and one record
 * per delivery attempt on `sluice.attempts` (docs/reference/tracking-api.md, envelope.md, delivery.md).
 */
export const REJECT_HEADERS = {
  code: 'sluice-reject-code',
  message: 'sluice-reject-message',
  /** Which component rejected it: `ingest`, `deliverer`, `retry`, `audience-sync`. */
  origin: 'sluice-reject-origin',
  sourceId: 'sluice-source-id',
  /** Index of the call in its batch (ingest). */
  index: 'sluice-reject-index',
  /** Where an unreadable record came from: `<topic>/<partition>/<offset>`. */
  from: 'sluice-reject-from',
  /**
   * Set when Kafka refused the rejected record itself for its content (too large for the rejected
   * topic): it is written again without its value, this header holding the broker's reason
   * (`MESSAGE_TOO_LARGE`); `from` still names the original.
   */
  valueDropped: 'sluice-reject-value-dropped',
} as const;

export interface RejectedRecordInput {
  code: string;
  message: string;
  origin: string;
  /** The rejected bytes exactly as received (a call's JSON, or an undecodable record's value). */
  value: Buffer | string | null;
  key?: string | null;
  sourceId?: string;
  index?: number;
  from?: string;
}

/** Builds the Kafka message for `sluice.rejected`: value untouched, reason in headers. */
export function rejectedRecord(input: RejectedRecordInput): {
  key: string | null;
  value: Buffer | string | null;
  headers: Record<string, string>;
} {
  const h = REJECT_HEADERS;
  const headers: Record<string, string> = {
    [h.code]: input.code,
    [h.message]: input.message,
    [h.origin]: input.origin,
  };
  if (input.sourceId !== undefined) headers[h.sourceId] = input.sourceId;
  if (input.index !== undefined) headers[h.index] = String(input.index);
  if (input.from !== undefined) headers[h.from] = input.from;
  return { key: input.key ?? null, value: input.value, headers };
}

/** The value of a record on `sluice.attempts` (JSON). */
export interface AttemptEvent {
  messageId: string;
  sourceId: string;
  destinationId: string;
  eventType: string;
  endpoint: string;
  /** The attempt's number; for a deferral, the number the attempt not made would have had. */
  attempt: number;
  /**
   * `success`, `retryable`, `permanent` for a request made; for an endpoint the deliverer held
   * back without a request, why: `circuit_open`, `retry_after`, `rate_limited`, `destination_stalled`;
   * `filtered` when the destination's filter refused the event (one record for the destination,
   * `attempt: 0`, `endpoint: ""`, no request, never retried: docs/reference/filters.md); `waiting`
   * when the event waits behind an earlier event of its user (`waitingFor`, docs/reference/ordering.md).
   */
  outcome:
    | 'success'
    | 'filtered'
    | 'waiting'
    | 'retryable'
    | 'permanent'
    | 'circuit_open'
    | 'retry_after'
    | 'rate_limited'
    | 'destination_stalled';
  status?: number;
  error?: string;
  latencyMs: number;
  /** ISO time the attempt started. */
  at: string;
  /** First 1 KB of the response body (docs/reference/delivery.md). */
  responseSnippet?: string;
  /** The batch the event went in, when its destination delivers in batches (docs/reference/batches.md). */
  batchId?: string;
  /** How many events that batch held. */
  batchSize?: number;
  /** With `waiting`: the message id of the event it waits for (its user's head). */
  waitingFor?: string;
}

/**
 * The attempt record of a destination that made no request for an event (`attempt: 0`, no
 * endpoint): `filtered` by its filter, or `waiting` behind `waitingFor`, an earlier event of its user.
 */
export function noRequestRecord(
  event: Pick<AttemptEvent, 'messageId' | 'sourceId' | 'destinationId' | 'eventType'>,
  outcome: 'filtered' | 'waiting',
  at: number,
  waitingFor?: string,
): string {
  const record: AttemptEvent = {
    messageId: event.messageId,
    sourceId: event.sourceId,
    destinationId: event.destinationId,
    eventType: event.eventType,
    endpoint: '',
    attempt: 0,
    outcome,
    latencyMs: 0,
    at: new Date(at).toISOString(),
    ...(waitingFor !== undefined && { waitingFor }),
  };
  return JSON.stringify(record);
}
