/**
 * Every reason the deliverer gives for sending a record to `sluice.rejected` (the `code` label of
 * `sluice_deliverer_rejected_records_total` and the `sluice-reject-code` header): a closed set.
 * The first group are verdicts on the record: it cannot be read (the codec's codes, which the
 * record handler's types hold to this list), or it has no body to send. The second group are
 * failures of one step on one record that no verdict foresaw, named by the step.
 */
export const REJECT_REASONS = [
  // verdicts
  'empty',
  'not_json',
  'invalid_envelope',
  'unknown_schema',
  'registry_unavailable',
  'invalid_timestamp',
  'body_too_deep',
  'invalid_retry_headers',
  'invalid_parked_headers',
  // unforeseen failures of one step
  'undecodable',
  'unroutable',
  'unrenderable',
  'undeliverable',
] as const;

export type RejectReason = (typeof REJECT_REASONS)[number];

/** The steps of handling one record, in order. */
export type RecordStep = 'decode' | 'route' | 'render' | 'deliver';

const STEP_REASON: Record<RecordStep, RejectReason> = {
  decode: 'undecodable',
  route: 'unroutable',
  render: 'unrenderable',
  deliver: 'undeliverable',
};

/** Longest failure message kept on a rejected record (its header) and in the log line. */
export const MAX_REJECT_MESSAGE_CHARS = 1_000;

export type FailureVerdict =
  /** The record's own fault: it goes to `sluice.rejected` and counts as finished. */
  | { kind: 'reject'; reason: RejectReason; message: string }
  /** Not the record's fault (Kafka, a worker thread, the schema registry): the consumer must stop. */
  | { kind: 'fatal' };

/**
 * What an error thrown while handling one record means. Infrastructure failures (told apart by
 * `isInfrastructure`, which knows the error classes of Kafka, the worker threads and the registry)
 * end the consumer: the record is read again after a restart and nothing is lost. Anything else
 * happened to this record only, so the record is rejected with the reason of the step that failed
 * and the partition goes on.
 */
export function classifyFailure(
  err: unknown,
  step: RecordStep,
  isInfrastructure: (err: unknown) => boolean,
): FailureVerdict {
  if (isInfrastructure(err)) return { kind: 'fatal' };
  return { kind: 'reject', reason: STEP_REASON[step], message: failureMessage(err) };
}

/** `Name: message` of an error (or its text), cut to `MAX_REJECT_MESSAGE_CHARS`. */
export function failureMessage(err: unknown): string {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : `thrown: ${safeString(err)}`;
  return text.length > MAX_REJECT_MESSAGE_CHARS ? `${text.slice(0, MAX_REJECT_MESSAGE_CHARS - 1)}…` : text;
}

function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return typeof value;
  }
}
