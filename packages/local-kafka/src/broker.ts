// A real single-node Apache Kafka broker (KRaft, combined broker+controller) for local runs and
// tests: its lifecycle. The JVM runs under the local-runtime watchdog (jvm.ts), so it dies with
// the Node process that started it, however that process ends; its config is server-properties.ts
// and log4j.ts, its start-up probe readiness.ts.

import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createRuntimeDir,
  freePorts,
  NotReadyError,
  tailLog,
  waitUntilReady,
  type ChildExit,
  type RuntimeDir,
  type Supervised,
} from '@sluice/local-runtime';
import { ensureKafkaInstalled, type KafkaInstallation, type KafkaVersion } from './install.ts';
import { formatStorage, kafkaJava, startBrokerJvm, type BrokerFiles } from './jvm.ts';
import { brokerLogConfig, errorLines, toolsLogConfig } from './log4j.ts';
import { kafkaAnswers } from './readiness.ts';
import { HOST, randomClusterId, serverProperties, type BrokerTls } from './server-properties.ts';
import { generateTlsMaterial } from './tls-material.ts';

const DEFAULT_START_TIMEOUT_MS = 60_000;
const TEMP_PREFIX = 'sluice-kafka-';

export interface StartLocalKafkaOptions {
  /** Broker (PLAINTEXT) port on 127.0.0.1. Default: a free port. */
  port?: number;
  /**
   * Kafka data directory (`log.dirs`). Default: `data/` inside the broker's temp dir.
   * A directory given here is formatted only if it is not already, and is kept by `dispose()`.
   */
  logDir?: string;
  /** How long to wait for the broker to answer a metadata request. Default 60 000 ms. */
  startTimeoutMs?: number;
  /** Progress lines (first-time Maven download). Default: written to stderr. */
  log?: (line: string) => void;
  /** Apache Kafka version. Default: `SLUICE_KAFKA_VERSION`, else `KAFKA_VERSION` (4.1.1). */
  version?: KafkaVersion;
  /**
   * A secured broker: its client listener is SASL_SSL (SCRAM-SHA-512, and OAUTHBEARER accepting
   * unsigned tokens) with a certificate from a throwaway CA, and `brokers` names that listener.
   * The SCRAM user is created when the storage is formatted. `true` takes the defaults.
   */
  secured?: boolean | SecuredBrokerOptions;
}

export interface SecuredBrokerOptions {
  /** SCRAM-SHA-512 user created at start. Default `sluice`. */
  username?: string;
  /** Its password. Default: random. */
  password?: string;
  /** Require a client certificate signed by the throwaway CA (mutual TLS). Default false. */
  requireClientCertificate?: boolean;
}

/** How to reach a secured local broker: the values for `kafka.ssl` and `kafka.sasl`. */
export interface LocalKafkaSecurity {
  mechanism: 'scram-sha-512';
  username: string;
  password: string;
  /** The throwaway CA (PEM), for `kafka.ssl.caFile`. */
  caFile: string;
  /** A client certificate and key signed by that CA, for `kafka.ssl.certFile` / `keyFile`. */
  clientCertFile: string;
  clientKeyFile: string;
  /** The broker's PLAINTEXT listener (inter-broker traffic and start-up probe), `127.0.0.1:PORT`. */
  plaintextBrokers: string;
}

/** How the broker JVM exited. */
export type BrokerExit = ChildExit;

export interface LocalKafka {
  /** Bootstrap address for clients, `127.0.0.1:PORT` (the value for `KAFKA_BROKERS`). */
  readonly brokers: string;
  readonly port: number;
  readonly controllerPort: number;
  /** Pid of the broker JVM (of the last one started, if stopped). */
  readonly pid: number;
  /** True while the JVM is up (between a successful start and its exit). */
  readonly running: boolean;
  /** The broker's temp dir: config, broker logs, and data unless `logDir` was given. */
  readonly dir: string;
  readonly dataDir: string;
  /** The broker's own log (log4j). */
  readonly logFile: string;
  readonly clusterId: string;
  readonly version: KafkaVersion;
  /** Set for a secured broker (`secured` option): credentials and CA for its SASL_SSL listener. */
  readonly security?: LocalKafkaSecurity;
  /** Milliseconds the last (re)start took, from spawning the JVM to a successful metadata request. */
  readonly startupMs: number;
  /** SIGTERM (controlled shutdown) and wait for the JVM to exit; SIGKILL after 15 s. */
  stop(): Promise<void>;
  /** SIGKILL and wait for the JVM to exit. */
  kill(): Promise<void>;
  /** Start again on the same ports and data dir (stops first if running). */
  restart(): Promise<void>;
  /** stop(), then remove the temp dir. Idempotent. */
  dispose(): Promise<void>;
  /** Resolves when the current JVM exits (at once if it is not running). */
  exited(): Promise<BrokerExit>;
  /** The last lines of the broker's logs, for error messages. */
  logTail(lines?: number): string;
}

/** Starts a fresh single-node Kafka broker on 127.0.0.1 (fetching Kafka first if needed). */
export async function startLocalKafka(opts: StartLocalKafkaOptions = {}): Promise<LocalKafka> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  kafkaJava(); // before a download: without Java it is of no use
  const install = await ensureKafkaInstalled({ log, ...(opts.version && { version: opts.version }) });
  const dir = await createRuntimeDir(TEMP_PREFIX);
  try {
    const dataDir = opts.logDir ?? join(dir.path, 'data');
    await Promise.all([
      mkdir(dataDir, { recursive: true }),
      mkdir(join(dir.path, 'logs')),
      mkdir(join(dir.path, 'config')),
    ]);
    const broker = new Broker(install, dir, dataDir, opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
    if (opts.secured) await broker.secure(opts.secured === true ? {} : opts.secured);
    await broker.firstStart(opts.port);
    return broker;
  } catch (err) {
    await dir.remove();
    throw err;
  }
}

class Broker implements LocalKafka {
  readonly logFile: string;
  port = 0;
  controllerPort = 0;
  /** PLAINTEXT listener of a secured broker (inter-broker and probe); 0 when not secured. */
  plaintextPort = 0;
  security: LocalKafkaSecurity | undefined;
  tls: BrokerTls | undefined;
  clusterId = '';
  startupMs = 0;
  private run: Supervised | undefined;
  private disposed = false;
  private readonly files: BrokerFiles;
  private readonly install: KafkaInstallation;
  private readonly runtimeDir: RuntimeDir;
  readonly dataDir: string;
  private readonly startTimeoutMs: number;
  constructor(install: KafkaInstallation, dir: RuntimeDir, dataDir: string, startTimeoutMs: number) {
    this.install = install;
    this.runtimeDir = dir;
    this.dataDir = dataDir;
    this.startTimeoutMs = startTimeoutMs;
    this.logFile = join(dir.path, 'logs', 'server.log');
    this.files = {
      dir: dir.path,
      configFile: join(dir.path, 'config', 'server.properties'),
      jvmOut: join(dir.path, 'logs', 'jvm.out'),
    };
  }

  get dir(): string {
    return this.runtimeDir.path;
  }

  get version(): KafkaVersion {
    return this.install.version;
  }

  get brokers(): string {
    return `${HOST}:${this.port}`;
  }

  /** Where the start-up probe connects: the PLAINTEXT listener (secured brokers have both). */
  get probeBrokers(): string {
    return `${HOST}:${this.plaintextPort || this.port}`;
  }

  /** Makes the client listener SASL_SSL: throwaway CA and certificates, SCRAM user for the format. */
  async secure(options: SecuredBrokerOptions): Promise<void> {
    for (const [name, value] of [
      ['username', options.username],
      ['password', options.password],
    ] as const) {
      // They go into `--add-scram name=…,password=…` and a JAAS string: keep them to plain characters.
      if (value !== undefined && !/^[A-Za-z0-9._~-]+$/.test(value)) {
        throw new Error(`local-kafka: secured.${name} may only use letters, digits and . _ ~ -`);
      }
    }
    const tlsDir = join(this.dir, 'tls');
    await mkdir(tlsDir);
    this.tls = {
      ...(await generateTlsMaterial(tlsDir)),
      requireClientCertificate: options.requireClientCertificate ?? false,
    };
    this.security = {
      mechanism: 'scram-sha-512',
      username: options.username ?? 'sluice',
      password: options.password ?? randomBytes(12).toString('base64url'),
      caFile: this.tls.caFile,
      clientCertFile: this.tls.clientCertFile,
      clientKeyFile: this.tls.clientKeyFile,
      plaintextBrokers: '',
    };
  }

  get pid(): number {
    return this.run?.pid ?? -1;
  }

  get running(): boolean {
    return this.run?.running ?? false;
  }

  async firstStart(port: number | undefined): Promise<void> {
    await writeFile(join(this.dir, 'config', 'log4j.properties'), brokerLogConfig(this.version, this.logFile));
    await writeFile(join(this.dir, 'config', 'tools-log4j.properties'), toolsLogConfig(this.version));
    // A free port can be taken by someone else before the JVM binds it: then pick new ones.
    const attempts = port === undefined ? 3 : 1;
    for (let attempt = 1; ; attempt++) {
      const extra = this.tls ? 2 : 1;
      const ports = port === undefined ? await freePorts(extra + 1) : [port, ...(await freePorts(extra))];
      this.port = ports[0]!;
      this.controllerPort = ports[1]!;
      if (this.security) {
        this.plaintextPort = ports[2]!;
        this.security.plaintextBrokers = `${HOST}:${this.plaintextPort}`;
      }
      await writeFile(
        this.files.configFile,
        serverProperties({
          port: this.port,
          controllerPort: this.controllerPort,
          plaintextPort: this.plaintextPort,
          dataDir: this.dataDir,
          tls: this.tls,
          user: this.security,
        }),
      );
      if (attempt === 1) await this.formatIfNeeded();
      try {
        await this.launch();
        return;
      } catch (err) {
        const bindFailure = /Address already in use|BindException/.test(this.logTail(200));
        if (!bindFailure || attempt >= attempts) throw err;
        rmSync(this.logFile, { force: true });
      }
    }
  }

  async stop(): Promise<void> {
    await this.run?.stop();
  }

  async kill(): Promise<void> {
    await this.run?.kill();
  }

  async restart(): Promise<void> {
    if (this.disposed) throw new Error('local-kafka: restart() after dispose()');
    await this.stop();
    await this.launch();
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    try {
      await this.stop();
    } finally {
      await this.runtimeDir.remove();
    }
  }

  exited(): Promise<BrokerExit> {
    return this.run ? this.run.exited : Promise.resolve({ code: null, signal: null });
  }

  logTail(lines = 40): string {
    const parts: string[] = [];
    const errors = errorLines(this.logFile, 12);
    if (errors) parts.push(`--- first errors in ${this.logFile} ---\n${errors}`);
    for (const [name, file] of [
      ['jvm output', this.files.jvmOut],
      ['server.log', this.logFile],
    ] as const) {
      const text = tailLog(file, lines);
      if (text) parts.push(`--- last lines of ${name} (${file}) ---\n${text}`);
    }
    return parts.join('\n') || '(no broker output)';
  }

  private async formatIfNeeded(): Promise<void> {
    const meta = join(this.dataDir, 'meta.properties');
    if (existsSync(meta)) {
      this.clusterId = /^cluster\.id=(.*)$/m.exec(readFileSync(meta, 'utf8'))?.[1]?.trim() ?? '';
      return;
    }
    this.clusterId = randomClusterId();
    await formatStorage(this.install, this.files, this.clusterId, this.security);
  }

  private async launch(): Promise<void> {
    const started = Date.now();
    const run = await startBrokerJvm(this.install, this.files);
    this.run = run;
    try {
      await waitUntilReady(run, kafkaAnswers(this.probeBrokers), { timeoutMs: this.startTimeoutMs });
    } catch (err) {
      await run.kill();
      const reason = err instanceof NotReadyError ? err.message : String(err);
      throw new Error(`local-kafka: Apache Kafka ${this.version} on ${this.brokers} ${reason}.\n${this.logTail()}`);
    }
    this.startupMs = Date.now() - started;
  }
}
