export { createMetricsRegistry } from './metrics.ts';
export { handleOpsRequest } from './ops-routes.ts';
export type { OpsRoutes, ReadinessCheck } from './ops-routes.ts';
export { startHttpServer } from './http-server.ts';
export type { HttpServerOptions, RequestHandler, ServiceHttpServer } from './http-server.ts';
export { runService } from './run-service.ts';
export type { RunningService, RunServiceOptions } from './run-service.ts';
export { loadServiceContext } from './service-context.ts';
export type { ServiceContext } from './service-context.ts';
