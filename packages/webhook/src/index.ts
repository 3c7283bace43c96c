export {
  AddressPolicy,
  type AddressPolicySettings,
  type AddressVerdict,
  urlVerdict,
} from './address-policy.ts';
export {
  BATCH_ID_HEADER,
  BATCH_SIZE_HEADER,
  type BatchItem,
  type BatchResult,
  batchBaseBytes,
  batchBodyBytes,
  batchItemBytes,
  type FailedItem,
  MAX_BATCH_ERROR_CHARS,
  MAX_BATCH_RESULT_BYTES,
  parseBatchResult,
  renderBatchBody,
} from './batch.ts';
export { CONTENT_TYPE, MESSAGE_ID_HEADER, USER_AGENT } from './constants.ts';
export {
  CaFileError,
  DeliveryError,
  DeliveryTimeoutError,
  INVALID_REQUEST_CODE,
  InvalidEndpointUrlError,
  SsrfBlockedError,
  TIMEOUT_CODE,
  WebhookError,
} from './errors.ts';
export { type EventRequest, type EventRequestInput, eventRequest } from './event-request.ts';
export { MAX_BODY_DEPTH } from './nesting.ts';
export { encodeBody, renderBody, type RenderResult } from './render-body.ts';
export { batchRequestHeaders, requestHeaders } from './request-headers.ts';
export { routeEvent, WEBHOOKS_INTEGRATION } from './routing.ts';
export { signatureHeaders } from './signature-headers.ts';
export { caBundle } from './transport/ca-bundle.ts';
export { type EndpointTarget, endpointTarget } from './transport/endpoint-target.ts';
export { type LookupFunction, webhookConnector } from './transport/guarded-connector.ts';
export { type KeptBody, readBody } from './transport/read-body.ts';
export { type SingleAnswer, type SingleRequest, sendOnce } from './transport/send-once.ts';
export { webhookPost } from './transport/webhook-post.ts';
