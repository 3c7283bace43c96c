import {
  type Admin,
  createKafka,
  type Drainable,
  drainAndClose,
  ensureTopics,
  type Kafka,
  ProducerThread,
  type RetryKafka,
  StartupRetry,
  trackedAdmin,
} from '@sluice/kafka';
import { topicSpecs } from '@sluice/topology';
import { type HttpServerOptions, type ServiceHttpServer, startHttpServer } from './http-server.ts';
import { Lifecycle } from './lifecycle.ts';
import type { RunningService } from './run-service.ts';
import type { ServiceContext } from './service-context.ts';

/** A consumer as a service runs it: ConcurrentConsumer, SequentialConsumer, or one built on them. */
export interface ServiceConsumer extends Drainable {
  start(): Promise<void>;
  /** Joined to its group, for `/readyz`. */
  readonly connected: boolean;
  readonly fatal: Promise<Error>;
}

/** A producer the lifecycle connects, and disconnects (flushing) once the parts after it have ended. */
export interface ServiceProducer {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  readonly connected: boolean;
}

/** What `ServiceLifecycle#http` takes: the HTTP server's options apart from the ops routes it builds. */
export interface ServiceHttpOptions extends Omit<HttpServerOptions, 'ops'> {
  /** Serve `/metrics` on this server (default true; false where it lives on an admin port). */
  metrics?: boolean;
}

/**
 * The lifecycle of a Sluice service: the parts every service has (its Kafka client and topics,
 * producers, consumers, the HTTP server), each added in the order it starts, with its `/readyz`
 * check and fatal error; a service's own parts go through `add` and `open`.
 */
export class ServiceLifecycle extends Lifecycle {
  readonly #ctx: ServiceContext;
  readonly #startup: StartupRetry;

  constructor(ctx: ServiceContext) {
    super(ctx.logger);
    this.#ctx = ctx;
    this.#startup = ctx.startup?.retry ?? this.#newRetry();
  }

  /**
   * Runs a start-up Kafka call, trying it again while the brokers answer "not yet" until the
   * start-up deadline (`kafka.startupTimeout`, docs/operations.md "Start-up"). Every Kafka call a
   * service makes before it runs goes through it.
   */
  get startup(): RetryKafka {
    return this.#startup.run;
  }

  /**
   * Like `startup`, for a call made at start-up and again later (an ownership check, a partition's
   * state read after an assignment): each call has a whole `kafka.startupTimeout` of its own.
   */
  readonly retryKafka: RetryKafka = (operation, call) => this.#newRetry().run(operation, call);

  #newRetry(): StartupRetry {
    const ctx = this.#ctx;
    return new StartupRetry({
      timeoutMs: ctx.config.current.kafka.startupTimeoutMs,
      logger: ctx.logger,
      registry: ctx.registry,
    });
  }

  /** `<kafka.clientId>-<service>`: the client id of the service's Kafka clients. */
  get clientId(): string {
    return `${this.#ctx.config.current.kafka.clientId}-${this.#ctx.name}`;
  }

  /**
   * The service's Kafka client, after every topic of the config exists (`ensureTopics`). The admin
   * client stays connected for the service's lag reads and checks and counts towards `/readyz`
   * (`kafka`); with `keepAdmin: false` it is disconnected once the topics exist.
   */
  async kafka(options: { keepAdmin: false }): Promise<{ kafka: Kafka }>;
  async kafka(options?: { keepAdmin?: true }): Promise<{ kafka: Kafka; admin: Admin }>;
  async kafka(options: { keepAdmin?: boolean } = {}): Promise<{ kafka: Kafka; admin?: Admin }> {
    const ctx = this.#ctx;
    const config = ctx.config.current;
    const kafka = createKafka({
      brokers: ctx.brokers,
      clientId: this.clientId,
      logger: ctx.logger,
      security: config.kafka,
    });
    const { admin, connected } = trackedAdmin(kafka);
    const ensure = async () => {
      await this.startup('connect the admin client', () => admin.connect());
      await ensureTopics(admin, topicSpecs(config), { retry: this.startup });
    };
    if (options.keepAdmin === false) {
      try {
        await ensure();
      } finally {
        await admin.disconnect();
      }
      return { kafka };
    }
    await this.start({ name: 'kafka admin', stop: () => admin.disconnect(), ready: { kafka: connected } }, ensure);
    return { kafka, admin };
  }

  /** Connects `producer`; it counts towards `/readyz` (`kafka`). */
  async producer<P extends ServiceProducer>(producer: P, name = 'producer'): Promise<P> {
    await this.start({ name, stop: () => producer.disconnect(), ready: { kafka: () => producer.connected } }, () =>
      this.startup(`connect the ${name}`, () => producer.connect()),
    );
    return producer;
  }

  /** A `ProducerThread` of `producers` SafeProducers with the service's settings; its death is fatal. */
  producerThread(producers: number): Promise<ProducerThread> {
    const ctx = this.#ctx;
    return this.open(
      'producer thread',
      () =>
        this.startup('start the producer thread', () =>
          ProducerThread.start({
            service: ctx.name,
            brokers: ctx.brokers,
            clientId: this.clientId,
            security: ctx.config.current.kafka,
            logLevel: ctx.logger.level,
            producers,
          }),
        ),
      (thread) => ({ stop: () => thread.disconnect(), ready: { kafka: () => thread.connected }, fatal: thread.died }),
    );
  }

  /**
   * Starts `consumers` together. At shutdown they stop fetching at once, then (after everything
   * added later has ended) drain together for up to `drainTimeoutMs` (default 20 s), commit and
   * leave their groups. Each counts towards `/readyz` (`kafka`); a fatal error of any is fatal.
   */
  async consumers(consumers: readonly ServiceConsumer[], options: { drainTimeoutMs?: number } = {}): Promise<void> {
    const started = new Set<ServiceConsumer>();
    await this.start(
      {
        name: 'consumers',
        // Only a running consumer has an intake to stop.
        stopIntake: () => started.forEach((c) => c.stopIntake()),
        stop: () => drainAndClose(consumers, this.#ctx.logger, options.drainTimeoutMs),
        ready: { kafka: () => consumers.every((c) => c.connected) },
        fatal: Promise.race(consumers.map((c) => c.fatal)),
      },
      // Every start has ended before a failed one stops them all: a consumer still joining when
      // the others were closed would join after its close and keep the process alive.
      async () => {
        const results = await Promise.allSettled(consumers.map(async (c) => (await c.start(), started.add(c))));
        const failed = results.find((r) => r.status === 'rejected');
        if (failed) throw failed.reason;
      },
    );
  }

  /**
   * Starts an HTTP server: `/healthz`, `/readyz` over the checks of every part added before it
   * (and `config`), `/metrics`, and the service's own routes. It is the first part a shutdown
   * closes: in-flight requests finish, new ones are refused.
   */
  http(options: ServiceHttpOptions): Promise<ServiceHttpServer> {
    const { metrics, ...server } = options;
    const ops = {
      registry: this.#ctx.registry,
      readiness: { ...this.readiness(), config: () => true },
      ...(metrics === false && { metrics }),
    };
    return this.open(
      'http server',
      async () => {
        // The stand-in that answered the probes during start-up hands the port over.
        await this.#ctx.startup?.releasePort(server.port);
        return startHttpServer({ ...server, ops });
      },
      (http) => ({ stop: () => http.close() }),
    );
  }
}

/** What a service factory made with `defineService` returns. */
export interface ServiceFactory<S> {
  start(): Promise<S & Required<RunningService>>;
}

/**
 * A service factory (docs/CONVENTIONS.md): `build` adds the service's parts to the lifecycle in
 * the order they start and returns what the service shows besides `close` and `fatal` (its
 * port, ...). Then the config file is watched for reloads. A start that fails at any step ends
 * what it had started, newest first, and rejects; `close` ends everything, newest first.
 */
export function defineService<S extends object>(
  ctx: ServiceContext,
  build: (life: ServiceLifecycle) => Promise<S>,
): ServiceFactory<S> {
  return {
    async start() {
      const life = new ServiceLifecycle(ctx);
      // The first part, so the last to end: spans of everything that drains at shutdown are exported.
      if (ctx.tracing) {
        const { tracing } = ctx;
        life.add({ name: 'tracing', stop: () => tracing.shutdown() });
      }
      try {
        const service = await build(life);
        life.add({ name: 'config watch', stop: () => ctx.config.close() });
        ctx.config.watch();
        return { ...service, fatal: life.fatal(), close: () => life.stop() };
      } catch (err) {
        await life.stop();
        throw err;
      }
    },
  };
}
