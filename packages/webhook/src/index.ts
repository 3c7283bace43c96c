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
export { MAX_BODY_DEPTH } from './nesting.ts';
export { encodeBody, renderBody, type RenderResult } from './render-body.ts';
export { batchRequestHeaders, requestHeaders } from './request-headers.ts';
export { routeEvent, WEBHOOKS_INTEGRATION } from './routing.ts';
export { signatureHeaders } from './signature-headers.ts';
