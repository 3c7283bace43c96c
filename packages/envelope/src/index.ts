export {
  CALL_TYPES,
  EVENT_TYPES,
  isCallType,
  isEventType,
  isJsonObject,
  type CallType,
  type EventType,
  type EventEnvelope,
  type JsonObject,
} from './envelope.ts';
export { envelopeJsonSchema } from './envelope-schema.ts';
export { parseCanonicalTimestamp } from './canonical-timestamp.ts';
export { recordKey } from './record-key.ts';
export {
  ORDERING_RELEASE_HEADER,
  orderingReleaseRecord,
  readOrderingRelease,
  type OrderingRelease,
} from './ordering-release.ts';
export {
  DEAD_REASONS,
  destinationGoneError,
  RETRY_HEADERS,
  RetryHeadersError,
  retryStateFromHeaders,
  retryStateToHeaders,
  type AttemptRecord,
  type DeadReason,
  type RecordHeaders,
  type RetryState,
} from './retry-state.ts';
export {
  noRequestRecord,
  REJECT_HEADERS,
  rejectedRecord,
  type AttemptEvent,
  type RejectedRecordInput,
} from './side-records.ts';
export { headerText, headersText, type RawHeaders } from './header-text.ts';
export {
  snapshotJsonSchema,
  type AudienceSnapshot,
  type ComputedTraitSnapshot,
  type Snapshot,
} from './snapshot-schema.ts';
export {
  ENVELOPE_FIELDS,
  ENVELOPE_LIMITS,
  MESSAGE_ID_RULE,
  REQUIRED_ENVELOPE_FIELDS,
  envelopeContractProblem,
  isDeliverableMessageId,
  nestingProblem,
  type EnvelopeFieldKind,
  type EnvelopeFieldName,
  type NestingProblem,
} from './envelope-contract.ts';
