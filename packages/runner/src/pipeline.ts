import { resolve } from 'node:path';
import { DEMO_CONFIG_PATH, loadConfigFile, readEnv } from '@sluice/config';
import { findDemoTarget, startDemoReceiver, type DemoReceiver, type DemoTarget } from '@sluice/demo-receiver';
import { startLocalKafka, type LocalKafka } from '@sluice/local-kafka';
import { renderBanner, type WebhookTarget } from './banner.ts';
import { DEFAULT_SERVICE_LOG_LEVEL, READY_TIMEOUT_MS, SERVICES } from './constants.ts';
import { readinessUrl } from './urls.ts';
import { describeExit, ServiceProcess } from './service-process.ts';
import { waitForReady } from './readiness.ts';

export interface PipelineOptions {
  /** The runner's environment (`KAFKA_BROKERS`, `SLUICE_CONFIG`, ports, `LOG_LEVEL`); passed on to the services. */
  env: NodeJS.ProcessEnv;
  /** Console output, one line at a time. */
  print: (line: string) => void;
  /** How long each service may take to become ready. Default `kafka.startupTimeout` + 120 s. */
  readyTimeoutMs?: number;
}

export interface Pipeline {
  /** Starts Kafka (unless `KAFKA_BROKERS` is set), the demo receiver and the services; prints the banner. */
  start(): Promise<void>;
  /** Resolves with a reason if a service exits on its own while the pipeline runs. */
  readonly failure: Promise<string>;
  /** SIGTERM each service and wait for it, close the receiver, stop Kafka. Idempotent; safe mid-start. */
  stop(): Promise<void>;
  /** Second Ctrl-C: SIGKILL every service at once. */
  kill(): void;
  /** Pids of the service processes (tests check none survives). */
  readonly pids: number[];
}

/**
 * Starts the demo receiver on the loopback endpoint's port, unless something already listens there
 * (the user's own receiver): then the webhooks go to that, and `undefined` says so.
 */
async function startDemoReceiverIfFree(
  target: DemoTarget,
  print: (line: string) => void,
): Promise<DemoReceiver | undefined> {
  try {
    return await startDemoReceiver({
      host: '127.0.0.1',
      port: target.port,
      path: target.path,
      ...(target.secret !== undefined && { secret: target.secret }),
      print,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return undefined;
    throw err;
  }
}

/** The whole local pipeline of `npm start` (docs/reference/operating-interface.md). */
export function createPipeline(options: PipelineOptions): Pipeline {
  const { print } = options;
  const env = readEnv(options.env);
  const configPath = resolve(env.configPath ?? DEMO_CONFIG_PATH);
  const services: ServiceProcess[] = [];
  let kafka: LocalKafka | undefined;
  let receiver: DemoReceiver | undefined;
  let stopping = false;
  let stopped: Promise<void> | undefined;
  let reportFailure: (reason: string) => void = () => {};
  const failure = new Promise<string>((resolveFailure) => (reportFailure = resolveFailure));

  const checkNotStopping = () => {
    if (stopping) throw new Error('stopped during start-up');
  };

  async function start(): Promise<void> {
    // Validate first: a bad config is one clear line, not four crashing services.
    const config = loadConfigFile(configPath, options.env);

    let brokers = env.kafkaBrokers?.join(',');
    if (brokers === undefined) {
      print('Starting a local Kafka broker (the first run downloads Apache Kafka from Maven Central)…');
      kafka = await startLocalKafka({ log: (line) => print(`[kafka] ${line}`) });
      brokers = kafka.brokers;
      print(`Kafka is up at ${brokers} (${kafka.startupMs} ms).`);
    }
    checkNotStopping();

    const target = findDemoTarget(config);
    let webhooks: WebhookTarget | undefined;
    if (target?.loopback) {
      receiver = await startDemoReceiverIfFree(target, print);
      webhooks = receiver
        ? { url: receiver.url, receiver: 'demo' }
        : { url: target.url, receiver: 'already-listening' };
    } else if (target) {
      webhooks = { url: target.url, receiver: 'elsewhere' };
    }
    checkNotStopping();

    const childEnv: NodeJS.ProcessEnv = {
      ...options.env,
      KAFKA_BROKERS: brokers,
      SLUICE_CONFIG: configPath,
      LOG_LEVEL: options.env.LOG_LEVEL ?? DEFAULT_SERVICE_LOG_LEVEL,
      ...Object.fromEntries(SERVICES.map((s) => [s.portVar, String(env.ports[s.portKey])])),
    };
    const readyTimeoutMs = options.readyTimeoutMs ?? config.kafka.startupTimeoutMs + READY_TIMEOUT_MS;
    for (const spec of SERVICES) {
      const service = new ServiceProcess({ name: spec.name, env: childEnv, print });
      services.push(service);
      void service.exited.then((exit) => {
        if (!stopping) reportFailure(`${spec.name} stopped unexpectedly (${describeExit(exit)})`);
      });
    }
    await Promise.all(
      SERVICES.map((spec, i) =>
        waitForReady(readinessUrl(env.ports[spec.portKey]), readyTimeoutMs, () => {
          if (stopping) return 'stopped during start-up';
          const service = services[i]!;
          return service.running ? undefined : `${spec.name} exited during start-up`;
        }).catch((err: Error) => {
          throw new Error(`${spec.name}: ${err.message}`);
        }),
      ),
    );

    const source = config.sources[0];
    print(
      renderBanner({
        ingestUrl: `http://localhost:${env.ports.ingest}`,
        ...(source?.writeKeys[0] !== undefined && { writeKey: source.writeKeys[0], sourceId: source.id }),
        services: SERVICES.map((s) => ({ name: s.name, url: `http://localhost:${env.ports[s.portKey]}` })).sort(
          (a, b) => a.url.localeCompare(b.url),
        ),
        brokers,
        localKafka: kafka !== undefined,
        configPath,
        ...(webhooks && { webhooks }),
        deliveryLog: {
          url: `http://localhost:${env.ports.deliveryLog}/`,
          ...(config.deliveryLog.adminToken !== undefined && { token: config.deliveryLog.adminToken }),
        },
      }),
    );
  }

  async function shutdown(): Promise<void> {
    const running = services.filter((s) => s.running);
    if (running.length > 0) print(`Stopping ${running.map((s) => s.name).join(', ')}…`);
    // Each service drains, commits and flushes on SIGTERM; Kafka must outlive all of them.
    const exits = await Promise.all(services.map((s) => s.stop()));
    exits.forEach((exit, i) => {
      if (exit.code !== 0 && exit.signal !== 'SIGTERM') print(`${services[i]!.name}: ${describeExit(exit)}`);
    });
    await receiver?.close();
    if (kafka) {
      print('Stopping Kafka…');
      await kafka.dispose();
    }
    print('Stopped.');
  }

  return {
    start,
    failure,
    stop() {
      stopping = true;
      stopped ??= shutdown();
      return stopped;
    },
    kill() {
      stopping = true;
      for (const s of services) s.kill();
    },
    get pids() {
      return services.map((s) => s.pid).filter((p): p is number => p !== undefined);
    },
  };
}
