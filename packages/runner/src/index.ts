export { createPipeline, type Pipeline, type PipelineOptions } from './pipeline.ts';
export {
  curlLine,
  DEMO_TRACK_BODY,
  GO_MODULE,
  renderBanner,
  shellQuote,
  type BannerInfo,
  type WebhookTarget,
} from './banner.ts';
export { SERVICES, type ServiceSpec } from './constants.ts';
