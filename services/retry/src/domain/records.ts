import { RETRY_HEADERS, retryStateToHeaders, type DeadReason, type RetryState } from '@sluice/envelope';

type HeaderValue = Buffer | string | (Buffer | string)[] | undefined;
export type InputHeaders = Record<string, HeaderValue>;

/** A record read from `sluice.retry` or a tier: what the service needs to pass it on untouched. */
export interface RetryRecordParts {
  key: Buffer | null;
  /** The exact webhook body bytes; never re-encoded. */
  value: Buffer | null;
  headers: InputHeaders;
}

export interface OutgoingMessage {
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer | string>;
  /** Epoch ms as a string: the Kafka record timestamp, i.e. when the record entered its tier. */
  timestamp?: string;
}

const RETRY_HEADER_NAMES = new Set<string>(Object.values(RETRY_HEADERS));

/** Headers that are not retry state (e.g. a replay marker) travel on unchanged. */
function passThrough(headers: InputHeaders): Record<string, Buffer | string> {
  const out: Record<string, Buffer | string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || RETRY_HEADER_NAMES.has(name)) continue;
    const single = Array.isArray(value) ? value[0] : value;
    if (single !== undefined) out[name] = single;
  }
  return out;
}

function withState(record: RetryRecordParts, state: RetryState): OutgoingMessage {
  return {
    key: record.key,
    value: record.value,
    headers: { ...passThrough(record.headers), ...retryStateToHeaders(state) },
  };
}

/**
 * The scheduled record, for a delay tier or `sluice.redeliver`: the due time is set, and a
 * `Retry-After` that has been applied is dropped so it cannot leak into the next failure's state.
 */
export function scheduledMessage(
  record: RetryRecordParts,
  state: RetryState,
  dueAt: number,
  enteredAt?: number,
): OutgoingMessage {
  const { retryAfterMs: _applied, ...rest } = state;
  const message = withState(record, { ...rest, dueAt });
  if (enteredAt !== undefined) message.timestamp = String(enteredAt);
  return message;
}

/** The dead letter: body bytes, the whole retry state with its full attempt history, the reason. */
export function deadLetterMessage(
  record: RetryRecordParts,
  state: RetryState,
  reason: DeadReason,
  deadAt: number,
): OutgoingMessage {
  const { dueAt: _stale, ...rest } = state;
  return withState(record, { ...rest, deadReason: reason, deadAt });
}
