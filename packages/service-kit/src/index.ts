export { createMetricsRegistry } from './metrics.ts';
export { handleOpsRequest, type OpsRoutes, type ReadinessCheck } from './ops-routes.ts';
export { startHttpServer, type HttpServerOptions, type RequestHandler, type ServiceHttpServer } from './http-server.ts';
export { runService, type RunningService, type RunServiceOptions, type StartCondition } from './run-service.ts';
export { runKafkaService, waitForKafka } from './kafka-wait.ts';
export { Lifecycle, type Part } from './lifecycle.ts';
export { defineService, ServiceLifecycle, type ServiceConsumer, type ServiceFactory } from './service-lifecycle.ts';
export { loadServiceContext, type ServiceContext } from './service-context.ts';
export { PARENT_WATCH_PRELOAD } from './parent-watch-path.ts';
export { SERVICE_NODE_FLAGS, serviceNodeArgs, type ServiceName } from './launch.ts';
export {
  type RuntimeCatalog,
  type RuntimeDestinationsStart,
  startRuntimeDestinations,
} from './runtime-destinations.ts';
export { TokenBucket, type TakeResult } from './token-bucket.ts';
export { WaiterQueue } from './waiter-queue.ts';
