/** The Sluice services, as named under `services/`. */
export type ServiceName = 'ingest' | 'deliverer' | 'retry' | 'audience-sync' | 'delivery-log';

/**
 * Node/V8 flags each service is started with, wherever it is started: the runner (`npm start`),
 * the tests, the benchmarks, each service's `npm start`, docker-compose and the Kubernetes
 * manifests (the last three are checked against this table by `test/ops/`).
 *
 * ingest and deliverer: `--max-semi-space-size=64`, a 64 MB young-generation semi-space instead
 * of V8's 16 MB. Their objects live for a request's or a delivery's round trip (~100 ms under
 * load), so with the default size many survive a scavenge and are promoted, and the old
 * generation is marked over and over. Measured in their benchmarks: ingest +10–12 % events/s
 * (−10 % CPU per event) for ~140 MB more peak RSS, deliverer +13–17 % webhooks/s
 * (docs/operations.md, "Runtime flags"). retry and audience-sync were not measured to gain and
 * keep V8's defaults.
 */
export const SERVICE_NODE_FLAGS: Readonly<Record<ServiceName, readonly string[]>> = {
  ingest: ['--max-semi-space-size=64'],
  deliverer: ['--max-semi-space-size=64'],
  retry: [],
  'audience-sync': [],
  'delivery-log': [],
};

/**
 * The arguments after `node` that start `name` from the repository root: its flags, any extra
 * `--import` preloads, then its entry point (TypeScript, run through Node's type stripping).
 */
export function serviceNodeArgs(name: ServiceName, preloads: readonly string[] = []): string[] {
  return [...SERVICE_NODE_FLAGS[name], ...preloads.flatMap((p) => ['--import', p]), `services/${name}/src/main.ts`];
}
