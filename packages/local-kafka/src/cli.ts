// local-kafka command line:
//   node packages/local-kafka/src/cli.ts install
//   node packages/local-kafka/src/cli.ts start [--port N] [--data-dir DIR]
//   node packages/local-kafka/src/cli.ts run [--port N] -- <command> [args...]

import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { ensureKafkaInstalled, KAFKA_VERSION, startLocalKafka, type LocalKafka } from './index.ts';

const USAGE = `usage: node packages/local-kafka/src/cli.ts <command>

  install
      Fetch Apache Kafka ${KAFKA_VERSION} into the cache (with Maven) and exit.
  start [--port N] [--data-dir DIR]
      Start a single-node broker on 127.0.0.1 and keep it up until SIGINT/SIGTERM.
      Prints the bootstrap address (127.0.0.1:PORT) on stdout.
  run [--port N] [--data-dir DIR] -- <command> [args...]
      Run <command> with KAFKA_BROKERS set. If KAFKA_BROKERS is already set, nothing is
      provisioned; otherwise a broker is started first and removed afterwards. Exits with
      the command's exit code.

Cache: $SLUICE_CACHE_DIR, else $XDG_CACHE_HOME/sluice, else ~/.cache/sluice.`;

type Signal = 'SIGINT' | 'SIGTERM';
const SIGNALS: Signal[] = ['SIGINT', 'SIGTERM'];

interface Options {
  port?: number;
  dataDir?: string;
  rest: string[];
}

function parse(args: string[]): Options {
  const opts: Options = { rest: [] };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      opts.rest = args.slice(i + 1);
      break;
    } else if (a === '--port') {
      const port = Number(args[++i]);
      if (!Number.isInteger(port) || port <= 0 || port > 65535) fail(`--port needs a port number`);
      opts.port = port;
    } else if (a === '--data-dir') {
      const dir = args[++i];
      if (!dir) fail('--data-dir needs a directory');
      opts.dataDir = dir;
    } else if (a.startsWith('-')) {
      fail(`unknown option ${a}`);
    } else {
      opts.rest = args.slice(i);
      break;
    }
  }
  return opts;
}

function fail(message: string): never {
  process.stderr.write(`local-kafka: ${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function signalExitCode(sig: NodeJS.Signals): number {
  return 128 + (constants.signals[sig] ?? 1);
}

async function startBroker(opts: Options): Promise<LocalKafka> {
  const t0 = Date.now();
  const kafka = await startLocalKafka({
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    ...(opts.dataDir !== undefined ? { logDir: opts.dataDir } : {}),
  });
  process.stderr.write(
    `local-kafka: Apache Kafka ${KAFKA_VERSION} (pid ${kafka.pid}) on ${kafka.brokers}, started in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`,
  );
  return kafka;
}

async function cmdInstall(): Promise<number> {
  const inst = await ensureKafkaInstalled({ log: (line) => process.stderr.write(`${line}\n`) });
  process.stderr.write(`local-kafka: Apache Kafka ${inst.version} is installed in ${inst.home}\n`);
  return 0;
}

async function cmdStart(opts: Options): Promise<number> {
  if (opts.rest.length > 0) fail(`start takes no arguments (got ${opts.rest.join(' ')})`);
  let signalled: Signal | undefined;
  const early = (sig: Signal) => (signalled = sig);
  for (const s of SIGNALS) process.on(s, early);
  const kafka = await startBroker(opts);
  for (const s of SIGNALS) process.off(s, early);
  if (!signalled) {
    process.stdout.write(`${kafka.brokers}\n`);
    process.stderr.write(
      `local-kafka: export KAFKA_BROKERS=${kafka.brokers}   (Ctrl-C to stop; broker log: ${kafka.logFile})\n`,
    );
    const keepAlive = setInterval(() => {}, 1 << 30);
    const outcome = await new Promise<{ signal: Signal } | { crashed: true }>((resolve) => {
      for (const s of SIGNALS) process.once(s, () => resolve({ signal: s }));
      kafka.exited().then(() => resolve({ crashed: true }));
    });
    clearInterval(keepAlive);
    if ('crashed' in outcome) {
      process.stderr.write(`local-kafka: the broker exited unexpectedly.\n${kafka.logTail()}\n`);
      await kafka.dispose();
      return 1;
    }
    signalled = outcome.signal;
  }
  // A second signal while stopping: do not wait for a controlled shutdown.
  for (const s of SIGNALS) process.on(s, () => void kafka.kill());
  process.stderr.write(`local-kafka: ${signalled}, stopping the broker ...\n`);
  await kafka.dispose();
  return 0;
}

async function cmdRun(opts: Options): Promise<number> {
  const [command, ...args] = opts.rest;
  if (!command) fail('run needs a command: run -- <command> [args...]');

  if (process.env.KAFKA_BROKERS) return runCommand(command, args, process.env);

  let signalled: Signal | undefined;
  const early = (sig: Signal) => (signalled = sig);
  for (const s of SIGNALS) process.on(s, early);
  const kafka = await startBroker(opts);
  for (const s of SIGNALS) process.off(s, early);
  try {
    if (signalled) return signalExitCode(signalled);
    const code = await runCommand(command, args, {
      ...process.env,
      KAFKA_BROKERS: kafka.brokers,
      SLUICE_LOCAL_KAFKA_PID: String(kafka.pid),
    });
    if (!kafka.running) process.stderr.write(`local-kafka: note: the broker was not running when the command ended.\n`);
    return code;
  } finally {
    for (const s of SIGNALS) process.on(s, () => void kafka.kill());
    await kafka.dispose();
  }
}

/** Runs a command with inherited stdio, forwarding SIGINT/SIGTERM; resolves to its exit code. */
function runCommand(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', env });
    const forward = (sig: Signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    };
    for (const s of SIGNALS) process.on(s, forward);
    const done = (code: number) => {
      for (const s of SIGNALS) process.off(s, forward);
      resolve(code);
    };
    child.on('error', (err) => {
      process.stderr.write(`local-kafka: cannot run ${command}: ${err.message}\n`);
      done(127);
    });
    child.on('exit', (code, sig) => done(code ?? signalExitCode(sig ?? 'SIGTERM')));
  });
}

async function main(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'install':
      if (rest.length > 0) fail('install takes no arguments');
      return cmdInstall();
    case 'start':
      return cmdStart(parse(rest));
    case 'run':
      return cmdRun(parse(rest));
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return 0;
    default:
      fail(sub ? `unknown command ${sub}` : 'missing command');
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
