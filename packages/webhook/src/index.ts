export { CONTENT_TYPE, MESSAGE_ID_HEADER, USER_AGENT } from './constants.ts';
export { MAX_BODY_DEPTH } from './nesting.ts';
export { encodeBody, renderBody, type RenderResult } from './render-body.ts';
export { requestHeaders } from './request-headers.ts';
export { routeEvent, WEBHOOKS_INTEGRATION } from './routing.ts';
export { signatureHeaders } from './signature-headers.ts';
