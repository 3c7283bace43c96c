import type { Registry } from 'prom-client';
import { type ServiceHttpServer, startHttpServer } from './http-server.ts';

export interface StartupProbeOptions {
  /** The service's port (and host, default `0.0.0.0`). */
  port: number;
  host?: string;
  registry: Registry;
  /** The `/readyz` check that is false while the service starts. */
  check: string;
}

/**
 * The service's port while the service is not running yet: `/healthz` 200, `/metrics`, and
 * `/readyz` 503 with the check that is false and what start-up waits for (`waitingFor`). It holds
 * the port from the first wait for Kafka until the service's own server takes the port over
 * (`release`), so probes get an answer through the whole start-up.
 */
export class StartupProbe {
  readonly #options: StartupProbeOptions;
  #server: Promise<ServiceHttpServer> | undefined;
  #released = false;
  #waitingFor: () => string | undefined = () => undefined;

  constructor(options: StartupProbeOptions) {
    this.#options = options;
  }

  /** Where `/readyz` reads what start-up waits for now. */
  explain(waitingFor: () => string | undefined): void {
    this.#waitingFor = waitingFor;
  }

  /** Starts answering on the port (once; not after `release`). */
  async open(): Promise<void> {
    if (this.#released) return;
    const { port, host, registry, check } = this.#options;
    this.#server ??= startHttpServer({
      port,
      ...(host && { host }),
      ops: { registry, readiness: { [check]: () => false }, waitingFor: () => this.#waitingFor() },
    });
    await this.#server;
  }

  /** Frees the port for the service's own server on `port` (a server on another port leaves it). */
  async release(port: number): Promise<void> {
    if (port !== this.#options.port) return;
    await this.close();
  }

  /** Stops answering, dropping keep-alive connections (probes) so the port can be bound at once. */
  async close(): Promise<void> {
    this.#released = true;
    const server = await this.#server?.catch(() => undefined);
    this.#server = undefined;
    if (!server) return;
    const closed = server.close();
    server.server.closeAllConnections();
    await closed;
  }
}
