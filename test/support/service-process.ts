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
};

const root = fileURLToPath(new URL('../../', import.meta.url));

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

  async start(): Promise<this> {
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
    await waitUntil(
      async () => {
        if (child.exitCode !== null) throw new Error(`${this.name} exited ${child.exitCode}: ${this.output}`);
        try {
          return (await fetch(`http://127.0.0.1:${this.port}/readyz`)).status === 200;
        } catch {
          return false;
        }
      },
      60_000,
      `${this.name} /readyz`,
    );
    return this;
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
