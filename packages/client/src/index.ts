export { Analytics, type AnalyticsEvents } from './analytics.ts';
export type { AnalyticsOptions } from './options.ts';
export type {
  AliasParams,
  CallOptions,
  GroupParams,
  IdentifyParams,
  Identity,
  Integrations,
  MessageType,
  PageParams,
  Properties,
  ScreenParams,
  TrackParams,
  WireMessage,
} from './message-types.ts';
// Every error the client throws or reports (each an AnalyticsError).
export * from './errors.ts';
export type { HttpRequest, HttpResponse, HttpTransport } from './http-transport.ts';
export { createUndiciTransport, type UndiciTransportOptions } from './undici-transport.ts';
export { systemClock, type Clock } from './clock.ts';
export type { LogSink } from './debug-log.ts';
export { backoffDelay, type BackoffSettings } from './backoff.ts';
export { nextBatchSize, type BatchLimits } from './batch-splitter.ts';
export { renderBatchBody, BATCH_BODY_OVERHEAD_BYTES } from './wire-body.ts';
export {
  DEFAULT_ENDPOINT,
  DEFAULT_FLUSH_AFTER_MS,
  DEFAULT_FLUSH_AT,
  DEFAULT_MAX_IN_FLIGHT,
  DEFAULT_MAX_QUEUE_SIZE,
  DEFAULT_MAX_RETRIES,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_RETRY_MAX_DELAY_MS,
  DEFAULT_RETRY_MIN_DELAY_MS,
  LIBRARY_NAME,
  LIBRARY_VERSION,
  MAX_BATCH_BYTES,
  MAX_BATCH_MESSAGES,
  MAX_MESSAGE_BYTES,
  MAX_RETRY_AFTER_MS,
} from './constants.ts';
