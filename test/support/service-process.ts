import { PARENT_WATCH_PRELOAD, serviceNodeArgs, type ServiceName } from '@sluice/service-kit';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { freePort, waitUntil } from '@sluice/testkit';

export type { ServiceName };

const PORT_VAR: Record<ServiceName, string> = {
  ingest: 'INGEST_PORT',
  deliverer: 'DELIVERER_PORT',
  retry: 'RETRY_PORT',
  'audience-sync': 'AUDIENCE_SYNC_PORT',
  'delivery-log': 'DELIVERY_LOG_PORT',
};

const root = fileURLToPath(new URL('../../', import.meta.url));
/** How long a started service may take to answer `/readyz` 200 (a loaded machine starts processes slowly). */
const READY_TIMEOUT_MS = 180_000;

/** Writes a config-file-shaped object as YAML, for services run as child processes. */
export function writeConfigFile(path: string, raw: Record<string, unknown>): string {
  writeFileSync(path, stringify(raw));
  return path;
}

/** A service running as its own process, exactly as in production (`node services/<name>/src/main.ts`). */
export class ServiceProcess {
  child: ChildProcess | undefined;
  port = 0;
  exits: (number | null)[] = [];
  /** Exits nobody asked for (not by `kill9()` or `sigterm()`), with the output before each. */
  unexpectedExits: { code: number | null; signal: NodeJS.Signals | null; output: string }[] = [];
  output = '';
  #stopping = false;

  readonly name: ServiceName;
  private readonly env: Record<string, string>;
  constructor(name: ServiceName, env: Record<string, string>) {
    this.name = name;
    this.env = env;
  }

  /**
   * Starts the process and waits for its `/readyz` to answer 200. A loaded machine can take long to
   * start a process (module loading, Kafka's "not yet" answers), so the wait is generous; a process
   * that exits meanwhile fails it at once, and a failure names the last `/readyz` answer and the
   * output, and stops the process.
   */
  async start(): Promise<this> {
    const child = await this.spawn();
    let answer = 'no answer yet';
    try {
      await waitUntil(
        async () => {
          if (child.exitCode !== null || child.signalCode !== null) {
            throw new Error(
              `${this.name} exited (${child.exitCode ?? child.signalCode}) before ready:\n${this.output}`,
            );
          }
          try {
            const res = await fetch(`${this.url}/readyz`);
            answer = `${res.status} ${await res.text()}`;
            return res.status === 200;
          } catch (err) {
            answer = String((err as Error).cause ?? err);
            return false;
          }
        },
        READY_TIMEOUT_MS,
        () => `${this.name} /readyz (last answer: ${answer}); output:\n${this.output.slice(-4_000)}`,
      );
    } catch (err) {
      await this.kill9();
      throw err;
    }
    return this;
  }

  /** Starts the process without waiting for it to be ready. */
  async spawn(): Promise<ChildProcess> {
    this.port = this.port || (await freePort());
    const child = spawn(process.execPath, serviceNodeArgs(this.name, [PARENT_WATCH_PRELOAD]), {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'warn', ...this.env, [PORT_VAR[this.name]]: String(this.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const keep = (chunk: Buffer) => (this.output = (this.output + chunk.toString()).slice(-20_000));
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    this.#stopping = false;
    child.on('exit', (code, signal) => {
      this.exits.push(code);
      if (!this.#stopping) this.unexpectedExits.push({ code, signal, output: this.output.slice(-4_000) });
    });
    return child;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** kill -9: no goodbye, no commit. */
  async kill9(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** Graceful stop; resolves with the exit code and how long it took. */
  async sigterm(): Promise<{ code: number | null; ms: number }> {
    const t0 = Date.now();
    const code = await this.signal('SIGTERM');
    return { code, ms: Date.now() - t0 };
  }

  private signal(sig: NodeJS.Signals): Promise<number | null> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child?.exitCode ?? null);
    this.#stopping = true;
    return new Promise((resolve) => {
      child.once('exit', (code) => resolve(code));
      child.kill(sig);
    });
  }
}
