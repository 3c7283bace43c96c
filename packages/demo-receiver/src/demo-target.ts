import type { SluiceConfig } from '@sluice/config';

/** Where a config sends its demo webhooks, and the secret they are signed with. */
export interface DemoTarget {
  /** The endpoint URL as the banner shows it: redacted (`redactUrl`), since it may carry credentials. */
  url: string;
  /** Host name of the endpoint URL (`127.0.0.1`, `demo-receiver`, …). */
  hostname: string;
  port: number;
  path: string;
  secret?: string;
  /** True when the endpoint is on this machine, so a receiver started here will get the webhooks. */
  loopback: boolean;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/**
 * The first http endpoint of the first enabled destination: in the demo configs that is the demo
 * receiver. `undefined` when the config sends nothing anywhere over plain http.
 */
export function findDemoTarget(config: SluiceConfig): DemoTarget | undefined {
  for (const destination of config.destinations) {
    if (!destination.enabled) continue;
    for (const endpoint of destination.endpoints) {
      let url: URL;
      try {
        url = new URL(endpoint.url);
      } catch {
        continue;
      }
      if (url.protocol !== 'http:') continue;
      return {
        url: endpoint.ref,
        hostname: url.hostname,
        port: url.port === '' ? 80 : Number(url.port),
        path: url.pathname,
        ...(destination.sharedSecret !== undefined && { secret: destination.sharedSecret }),
        loopback: LOOPBACK.has(url.hostname) || url.hostname.startsWith('127.'),
      };
    }
  }
  return undefined;
}
