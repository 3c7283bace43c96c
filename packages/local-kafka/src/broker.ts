// A real single-node Apache Kafka broker (KRaft, combined broker+controller) for local runs and
// tests. The JVM runs under a small watchdog process (watchdog.mjs) so that it dies with the
// Node process that started it, however that process ends.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { ensureKafkaInstalled, isKafka4, processExists, type KafkaInstallation, type KafkaVersion } from './install.ts';
import { freePorts } from './free-ports.ts';
import { generateTlsMaterial, type TlsMaterial } from './tls-material.ts';

const HOST = '127.0.0.1';
const NODE_ID = 1;
const DEFAULT_START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;
const TEMP_PREFIX = 'sluice-kafka-';
const WATCHDOG = fileURLToPath(new URL('./watchdog.mjs', import.meta.url));
const BROKER_JVM_OPTIONS = [
  '-Xms256m',
  '-Xmx1g',
  '-XX:+UseG1GC',
  '-XX:MaxGCPauseMillis=20',
  '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent',
  '-XX:+ExitOnOutOfMemoryError',
  '-Djava.awt.headless=true',
];
/** The storage tool is a short-lived command: favour start-up speed. */
const TOOL_JVM_OPTIONS = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Djava.awt.headless=true'];

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

export interface BrokerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

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

interface JvmRun {
  watchdog: ChildProcess;
  pid: number;
  exit: Promise<BrokerExit>;
  exitInfo?: BrokerExit;
}

const live = new Set<Broker>();
let exitHookInstalled = false;

/** Starts a fresh single-node Kafka broker on 127.0.0.1 (fetching Kafka first if needed). */
export async function startLocalKafka(opts: StartLocalKafkaOptions = {}): Promise<LocalKafka> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const install = await ensureKafkaInstalled({ log, ...(opts.version && { version: opts.version }) });
  sweepAbandonedTempDirs();
  const dir = await mkdtemp(join(tmpdir(), TEMP_PREFIX));
  try {
    await writeFile(join(dir, 'owner.json'), JSON.stringify({ ownerPid: process.pid }) + '\n');
    const dataDir = opts.logDir ?? join(dir, 'data');
    await Promise.all([mkdir(dataDir, { recursive: true }), mkdir(join(dir, 'logs')), mkdir(join(dir, 'config'))]);
    const broker = new Broker(install, dir, dataDir, opts.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS);
    if (opts.secured) await broker.secure(opts.secured === true ? {} : opts.secured);
    await broker.firstStart(opts.port);
    return broker;
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
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
  tls: (TlsMaterial & { requireClientCertificate: boolean }) | undefined;
  clusterId = '';
  startupMs = 0;
  private run: JvmRun | undefined;
  private disposed = false;
  private readonly configFile: string;
  private readonly jvmOut: string;

  private readonly install: KafkaInstallation;
  readonly dir: string;
  readonly dataDir: string;
  private readonly startTimeoutMs: number;
  constructor(install: KafkaInstallation, dir: string, dataDir: string, startTimeoutMs: number) {
    this.install = install;
    this.dir = dir;
    this.dataDir = dataDir;
    this.startTimeoutMs = startTimeoutMs;
    this.logFile = join(dir, 'logs', 'server.log');
    this.jvmOut = join(dir, 'logs', 'jvm.out');
    this.configFile = join(dir, 'config', 'server.properties');
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
    return this.run !== undefined && this.run.exitInfo === undefined;
  }

  async firstStart(port: number | undefined): Promise<void> {
    const kafka4 = isKafka4(this.version);
    await writeFile(
      join(this.dir, 'config', 'log4j.properties'),
      kafka4 ? brokerLog4j2(this.logFile) : brokerLog4j(this.logFile),
    );
    await writeFile(join(this.dir, 'config', 'tools-log4j.properties'), kafka4 ? TOOLS_LOG4J2 : TOOLS_LOG4J);
    installExitHook();
    live.add(this);
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
      await writeFile(this.configFile, serverProperties(this));
      if (attempt === 1) await this.formatIfNeeded();
      try {
        await this.launch();
        return;
      } catch (err) {
        const bindFailure = /Address already in use|BindException/.test(this.logTail(200));
        if (!bindFailure || attempt >= attempts) {
          live.delete(this);
          throw err;
        }
        rmSync(this.logFile, { force: true });
      }
    }
  }

  async stop(): Promise<void> {
    const run = this.run;
    if (!run) return;
    if (!run.exitInfo) {
      announceStop(run);
      signal(run, 'SIGTERM');
    }
    await waitForExit(run, STOP_GRACE_MS);
  }

  async kill(): Promise<void> {
    const run = this.run;
    if (!run) return;
    if (!run.exitInfo) {
      announceStop(run);
      signal(run, 'SIGKILL');
    }
    await waitForExit(run, STOP_GRACE_MS);
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
      live.delete(this);
      await rm(this.dir, { recursive: true, force: true, maxRetries: 3 });
    }
  }

  exited(): Promise<BrokerExit> {
    return this.run ? this.run.exit : Promise.resolve({ code: null, signal: null });
  }

  logTail(lines = 40): string {
    const parts: string[] = [];
    const errors = errorLines(this.logFile, 12);
    if (errors) parts.push(`--- first errors in ${this.logFile} ---\n${errors}`);
    for (const [name, file] of [
      ['jvm output', this.jvmOut],
      ['server.log', this.logFile],
    ] as const) {
      const text = tail(file, lines);
      if (text) parts.push(`--- last lines of ${name} (${file}) ---\n${text}`);
    }
    return parts.join('\n') || '(no broker output)';
  }

  /** Exit hook: synchronous last-resort cleanup. */
  emergencyCleanup(): void {
    if (this.running) {
      signal(this.run!, 'SIGKILL');
      // The watchdog notices our exit and removes the temp dir once the JVM is gone.
    } else if (!this.disposed) {
      try {
        rmSync(this.dir, { recursive: true, force: true });
      } catch {
        // best effort
      }
    }
  }

  private async formatIfNeeded(): Promise<void> {
    if (existsSync(join(this.dataDir, 'meta.properties'))) {
      const meta = readFileSync(join(this.dataDir, 'meta.properties'), 'utf8');
      this.clusterId = /^cluster\.id=(.*)$/m.exec(meta)?.[1]?.trim() ?? '';
      return;
    }
    this.clusterId = randomClusterId();
    const { code, output } = await runJava([
      ...TOOL_JVM_OPTIONS,
      logConfigFlag(this.version, join(this.dir, 'config', 'tools-log4j.properties')),
      '-cp',
      this.install.classpath,
      'kafka.tools.StorageTool',
      'format',
      '-t',
      this.clusterId,
      '-c',
      this.configFile,
      ...(this.security ? scramUsers(this.security) : []),
    ]);
    if (code !== 0) throw new Error(`local-kafka: formatting storage failed (exit ${code}):\n${output.trim()}`);
  }

  private async launch(): Promise<void> {
    const started = Date.now();
    const run = await spawnJvm(
      [
        ...BROKER_JVM_OPTIONS,
        logConfigFlag(this.version, join(this.dir, 'config', 'log4j.properties')),
        `-Dkafka.logs.dir=${join(this.dir, 'logs')}`,
        '-cp',
        this.install.classpath,
        'kafka.Kafka',
        this.configFile,
      ],
      this.jvmOut,
      this.dir,
    );
    this.run = run;
    try {
      await waitUntilReady(this.probeBrokers, run, started + this.startTimeoutMs);
    } catch (err) {
      announceStop(run);
      signal(run, 'SIGKILL');
      await waitForExit(run, STOP_GRACE_MS);
      const message = (err as Error).message;
      const reason = message.startsWith('exited')
        ? message
        : `did not become ready within ${this.startTimeoutMs / 1000} s`;
      throw new Error(`local-kafka: Apache Kafka ${this.version} on ${this.brokers} ${reason}.\n${this.logTail()}`);
    }
    this.startupMs = Date.now() - started;
  }
}

// ---------------------------------------------------------------------------------------------

async function spawnJvm(args: string[], outFile: string, cleanupDir: string): Promise<JvmRun> {
  const fd = openSync(outFile, 'a');
  let watchdog: ChildProcess;
  try {
    watchdog = spawn(process.execPath, [WATCHDOG, '--cleanup', cleanupDir, '--', javaBinary(), ...args], {
      // Own session: a Ctrl-C in the terminal reaches the owner, which decides what to do.
      detached: true,
      stdio: ['ignore', fd, fd, 'ipc'],
      cwd: cleanupDir,
    });
  } finally {
    closeSync(fd);
  }
  // Neither the watchdog nor its channel keeps the owner alive; see the exit hook.
  watchdog.unref();
  watchdog.channel?.unref();

  let resolveExit!: (e: BrokerExit) => void;
  const exit = new Promise<BrokerExit>((r) => (resolveExit = r));
  let reported: BrokerExit | undefined;
  return new Promise<JvmRun>((resolve, reject) => {
    let run: JvmRun | undefined;
    const keepAlive = setTimeout(
      () => reject(new Error('local-kafka: the watchdog did not start the JVM within 10 s')),
      10_000,
    );
    watchdog.on('message', (raw) => {
      const m = raw as {
        type: string;
        pid?: number;
        code?: number | null;
        signal?: NodeJS.Signals | null;
        message?: string;
      };
      if (m.type === 'spawned' && typeof m.pid === 'number') {
        clearTimeout(keepAlive);
        run = { watchdog, pid: m.pid, exit };
        resolve(run);
      } else if (m.type === 'error') {
        clearTimeout(keepAlive);
        reject(javaMissing(m.message ?? 'spawn failed'));
      } else if (m.type === 'exit') {
        // The JVM is gone (reaped by the watchdog); the watchdog itself follows.
        reported = { code: m.code ?? null, signal: m.signal ?? null };
        if (run) run.exitInfo = reported;
      }
    });
    watchdog.on('error', (err) => {
      clearTimeout(keepAlive);
      reject(err);
    });
    // 'close': the watchdog has exited and its channel is closed, so both processes are gone.
    watchdog.on('close', (code, sig) => {
      clearTimeout(keepAlive);
      const info = reported ?? {
        code: code !== null && code < 128 ? code : null,
        signal: sig ?? (code === 137 ? 'SIGKILL' : code === 143 ? 'SIGTERM' : null),
      };
      if (run) run.exitInfo = info;
      resolveExit(info);
      reject(new Error(`local-kafka: the watchdog exited (${code ?? sig}) before starting the JVM`));
    });
  });
}

/** Tells the watchdog that the owner itself is stopping the JVM (so it need not linger). */
function announceStop(run: JvmRun): void {
  if (run.watchdog.connected) {
    try {
      run.watchdog.send({ type: 'stopping' });
    } catch {
      // watchdog gone
    }
  }
}

/**
 * Waits until JVM and watchdog are gone, SIGKILLing the JVM after `killAfterMs`. The timer also
 * keeps the event loop alive meanwhile (the watchdog itself is unref'd).
 */
async function waitForExit(run: JvmRun, killAfterMs: number): Promise<BrokerExit> {
  const timer = setTimeout(() => signal(run, 'SIGKILL'), killAfterMs);
  try {
    return await run.exit;
  } finally {
    clearTimeout(timer);
  }
}

function signal(run: JvmRun, sig: NodeJS.Signals): void {
  if (run.exitInfo) return;
  try {
    process.kill(run.pid, sig);
  } catch {
    // already gone
  }
}

async function waitUntilReady(brokers: string, run: JvmRun, deadline: number): Promise<void> {
  const kafka = new Kafka({
    clientId: 'local-kafka-probe',
    brokers: [brokers],
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1_000,
    requestTimeout: 5_000,
    retry: { retries: 0 },
  });
  for (;;) {
    if (run.exitInfo)
      throw new Error(`exited during start-up (${run.exitInfo.signal ?? `exit code ${run.exitInfo.code}`})`);
    if (Date.now() > deadline) throw new Error('timeout');
    const admin = kafka.admin({ retry: { retries: 0 } });
    try {
      await admin.connect();
      await admin.listTopics();
      return;
    } catch {
      // not yet
    } finally {
      await admin.disconnect().catch(() => {});
    }
    await Promise.race([sleep(150), run.exit]);
  }
}

function runJava(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn(javaBinary(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.on('error', (err) => reject(javaMissing(err.message)));
    child.on('close', (code) => resolve({ code, output }));
  });
}

function javaBinary(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
}

function javaMissing(detail: string): Error {
  return new Error(
    `local-kafka: cannot run Java (${javaBinary()}: ${detail}). Apache Kafka needs Java 17 or later ` +
      `(set JAVA_HOME or put 'java' on PATH), or set KAFKA_BROKERS to use an existing broker.`,
  );
}

/** Kafka-style cluster id: 16 random bytes, base64url without padding, not starting with '-'. */
function randomClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/**
 * The SASL_SSL client listener of a secured broker: PEM key and trust stores from the throwaway CA;
 * SCRAM-SHA-512 and SCRAM-SHA-256 (the user in the cluster metadata), PLAIN (the same user, in the
 * listener's JAAS config), and OAUTHBEARER with Kafka's built-in validator of unsigned tokens
 * (enough to test a client's token handling; never a production setting).
 */
function securedListenerProperties(
  tls: TlsMaterial & { requireClientCertificate: boolean },
  user: { username: string; password: string },
): Record<string, string> {
  const prefix = 'listener.name.sasl_ssl';
  const scram = 'org.apache.kafka.common.security.scram.ScramLoginModule required;';
  return {
    'sasl.enabled.mechanisms': 'SCRAM-SHA-512,SCRAM-SHA-256,PLAIN,OAUTHBEARER',
    [`${prefix}.scram-sha-512.sasl.jaas.config`]: scram,
    [`${prefix}.scram-sha-256.sasl.jaas.config`]: scram,
    [`${prefix}.plain.sasl.jaas.config`]: `org.apache.kafka.common.security.plain.PlainLoginModule required user_${user.username}="${user.password}";`,
    [`${prefix}.oauthbearer.sasl.jaas.config`]:
      'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="broker";',
    [`${prefix}.ssl.keystore.type`]: 'PEM',
    [`${prefix}.ssl.keystore.location`]: tls.brokerKeyStoreFile,
    [`${prefix}.ssl.truststore.type`]: 'PEM',
    [`${prefix}.ssl.truststore.location`]: tls.caFile,
    [`${prefix}.ssl.client.auth`]: tls.requireClientCertificate ? 'required' : 'none',
  };
}

function serverProperties(b: {
  port: number;
  controllerPort: number;
  plaintextPort: number;
  dataDir: string;
  tls: (TlsMaterial & { requireClientCertificate: boolean }) | undefined;
  security: LocalKafkaSecurity | undefined;
}): string {
  const listeners = b.tls
    ? {
        listeners: `SASL_SSL://${HOST}:${b.port},PLAINTEXT://${HOST}:${b.plaintextPort},CONTROLLER://${HOST}:${b.controllerPort}`,
        'advertised.listeners': `SASL_SSL://${HOST}:${b.port},PLAINTEXT://${HOST}:${b.plaintextPort}`,
        'listener.security.protocol.map': 'SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
        ...securedListenerProperties(b.tls, b.security!),
      }
    : {
        listeners: `PLAINTEXT://${HOST}:${b.port},CONTROLLER://${HOST}:${b.controllerPort}`,
        'advertised.listeners': `PLAINTEXT://${HOST}:${b.port}`,
        'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
      };
  const props: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': NODE_ID,
    'controller.quorum.voters': `${NODE_ID}@${HOST}:${b.controllerPort}`,
    ...listeners,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'log.dirs': b.dataDir,
    // Single node: every replication factor / ISR is 1.
    'num.partitions': 1,
    'default.replication.factor': 1,
    'min.insync.replicas': 1,
    'offsets.topic.replication.factor': 1,
    'offsets.topic.num.partitions': 10,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'transaction.state.log.num.partitions': 10,
    // Topics are created explicitly (from the Sluice config), never by a stray produce/fetch.
    'auto.create.topics.enable': false,
    'delete.topic.enable': true,
    'group.initial.rebalance.delay.ms': 0,
    // Small machine, small broker.
    'num.network.threads': 2,
    'num.io.threads': 4,
    'num.recovery.threads.per.data.dir': 1,
    'log.cleaner.threads': 1,
    'log.cleaner.dedupe.buffer.size': 32 * 1024 * 1024,
    'log.retention.hours': 168,
    'log.segment.bytes': 256 * 1024 * 1024,
    'log.retention.check.interval.ms': 300_000,
  };
  return (
    '# Generated by @sluice/local-kafka (single-node KRaft: broker + controller).\n' +
    Object.entries(props)
      .map(([k, v]) => `${k}=${String(v).replace(/\\/g, '\\\\')}`)
      .join('\n') +
    '\n'
  );
}

function brokerLog4j(file: string): string {
  return `log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=${file.replace(/\\/g, '/')}
log4j.appender.file.MaxFileSize=20MB
log4j.appender.file.MaxBackupIndex=2
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.kafka.network.RequestChannel$=WARN
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.authorizer.logger=WARN
log4j.logger.org.apache.kafka.clients=WARN
`;
}

/** `kafka-storage format` arguments creating the SCRAM user for both SCRAM mechanisms. */
function scramUsers(user: { username: string; password: string }): string[] {
  const credential = `[name=${user.username},password=${user.password}]`;
  return ['--add-scram', `SCRAM-SHA-512=${credential}`, '--add-scram', `SCRAM-SHA-256=${credential}`];
}

/** Kafka 4.x logs through log4j 2: the same file, levels and line format as `brokerLog4j`. */
function brokerLog4j2(file: string): string {
  const quiet = [
    'kafka.request.logger',
    'kafka.network.RequestChannel$',
    'state.change.logger',
    'kafka.authorizer.logger',
    'org.apache.kafka.clients',
  ];
  return `status = warn
appender.file.type = RollingFile
appender.file.name = file
appender.file.fileName = ${file.replace(/\\/g, '/')}
appender.file.filePattern = ${file.replace(/\\/g, '/')}.%i
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 20MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 2
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
${quiet.map((name, i) => `logger.q${i}.name = ${name}\nlogger.q${i}.level = WARN`).join('\n')}
`;
}

const TOOLS_LOG4J2 = `status = warn
appender.stderr.type = Console
appender.stderr.name = stderr
appender.stderr.target = SYSTEM_ERR
appender.stderr.layout.type = PatternLayout
appender.stderr.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.stderr.ref = stderr
`;

/** The JVM flag naming the logging config: log4j 1 (reload4j) for Kafka 3.x, log4j 2 for 4.x. */
function logConfigFlag(version: KafkaVersion, file: string): string {
  return isKafka4(version) ? `-Dlog4j2.configurationFile=${fileUrl(file)}` : `-Dlog4j.configuration=${fileUrl(file)}`;
}

const TOOLS_LOG4J = `log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
`;

function fileUrl(path: string): string {
  return new URL(`file://${path.startsWith('/') ? '' : '/'}${path.replace(/\\/g, '/')}`).href;
}

function tail(file: string, lines: number): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text
      .split('\n')
      .slice(-lines - 1)
      .join('\n')
      .trim();
  } catch {
    return '';
  }
}

/** The first ERROR/FATAL entries (with their stack trace heads) of a log4j log. */
function errorLines(file: string, max: number): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return '';
  }
  const out: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && out.length < max; i++) {
    if (!/^\[[^\]]+\] (ERROR|FATAL) /.test(lines[i]!)) continue;
    out.push(lines[i]!);
    // A few lines of the stack trace that follows, if any.
    for (let j = i + 1; j < lines.length && j <= i + 3 && !lines[j]!.startsWith('['); j++) out.push(lines[j]!);
  }
  return out.join('\n');
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const broker of live) broker.emergencyCleanup();
  });
}

/**
 * Removes temp dirs left by owners that died together with their watchdog (rare: the watchdog
 * normally removes them). A dir is abandoned when its owner is gone and it is over a minute old.
 */
function sweepAbandonedTempDirs(): void {
  const root = tmpdir();
  let entries: string[];
  try {
    entries = readdirSync(root).filter((e) => e.startsWith(TEMP_PREFIX));
  } catch {
    return;
  }
  for (const entry of entries) {
    const dir = join(root, entry);
    try {
      const { ownerPid } = JSON.parse(readFileSync(join(dir, 'owner.json'), 'utf8')) as { ownerPid: number };
      if (processExists(ownerPid) || Date.now() - statSync(dir).mtimeMs < 60_000) continue;
      if (ownerStillRunningJvm(dir)) continue;
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // not ours, or being created/removed: leave it
    }
  }
}

/** True if some live process still has this dir's server.properties on its command line (Linux). */
function ownerStillRunningJvm(dir: string): boolean {
  if (process.platform !== 'linux') return true; // cannot tell: keep it
  try {
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) return true;
      } catch {
        // process gone
      }
    }
  } catch {
    return true;
  }
  return false;
}
