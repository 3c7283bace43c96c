export { CALL_TYPES, EVENT_TYPES, isCallType, isEventType } from './envelope.ts';
export type { CallType, EventType, EventEnvelope, JsonObject } from './envelope.ts';
export { isJsonObject } from './envelope.ts';
export { envelopeJsonSchema } from './envelope-schema.ts';
export { parseCanonicalTimestamp } from './canonical-timestamp.ts';
export { recordKey } from './record-key.ts';
export {
  RETRY_HEADERS,
  RetryHeadersError,
  retryStateFromHeaders,
  retryStateToHeaders,
} from './retry-state.ts';
export type { AttemptRecord, DeadReason, RecordHeaders, RetryState } from './retry-state.ts';
export { REJECT_HEADERS, rejectedRecord } from './side-records.ts';
export type { AttemptEvent, RejectedRecordInput } from './side-records.ts';
export { snapshotJsonSchema } from './snapshot-schema.ts';
export type { AudienceSnapshot, ComputedTraitSnapshot, Snapshot } from './snapshot-schema.ts';
export {
  ENVELOPE_FIELDS,
  ENVELOPE_LIMITS,
  MESSAGE_ID_RULE,
  REQUIRED_ENVELOPE_FIELDS,
  envelopeContractProblem,
  isDeliverableMessageId,
  nestingProblem,
} from './envelope-contract.ts';
export type { EnvelopeFieldKind, EnvelopeFieldName, NestingProblem } from './envelope-contract.ts';
