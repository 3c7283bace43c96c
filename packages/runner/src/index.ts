export { createPipeline } from './pipeline.ts';
export type { Pipeline, PipelineOptions } from './pipeline.ts';
export { curlLine, DEMO_TRACK_BODY, GO_MODULE, renderBanner, shellQuote } from './banner.ts';
export type { BannerInfo, WebhookTarget } from './banner.ts';
export { SERVICES } from './constants.ts';
export type { ServiceSpec } from './constants.ts';
