import { PARENT_WATCH_PRELOAD, serviceNodeArgs, type ServiceName } from '@sluice/service-kit';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT, STOP_GRACE_MS } from './constants.ts';

const PARENT_WATCH = pathToFileURL(PARENT_WATCH_PRELOAD).href;

export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcessOptions {
  name: ServiceName;
  env: NodeJS.ProcessEnv;
  /** Each line the service writes (stdout and stderr), prefixed with its name. */
  print: (line: string) => void;
}

/** One service as a child process: `node <its flags> services/<name>/src/main.ts`. */
export class ServiceProcess {
  readonly name: string;
  readonly exited: Promise<ServiceExit>;
  private readonly child: ChildProcess;
  private exitStatus: ServiceExit | undefined;

  constructor(options: ServiceProcessOptions) {
    this.name = options.name;
    this.child = spawn(process.execPath, serviceNodeArgs(options.name, [PARENT_WATCH]), {
      cwd: REPO_ROOT,
      env: options.env,
      // Own process group: a Ctrl-C in the terminal reaches the runner only; it stops the services.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (stream) createInterface({ input: stream }).on('line', (line) => options.print(`[${this.name}] ${line}`));
    }
    this.exited = new Promise((resolve) => {
      this.child.once('error', (err) => {
        options.print(`[${this.name}] could not start: ${err.message}`);
        this.exitStatus = { code: 127, signal: null };
        resolve(this.exitStatus);
      });
      this.child.once('exit', (code, signal) => {
        this.exitStatus = { code, signal };
        resolve(this.exitStatus);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exitStatus === undefined;
  }

  /** SIGTERM (graceful: stop intake, drain, commit, flush), SIGKILL after the grace period. */
  async stop(graceMs = STOP_GRACE_MS): Promise<ServiceExit> {
    if (!this.running) return this.exited;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  kill(): void {
    this.signal('SIGKILL');
  }

  private signal(sig: NodeJS.Signals): void {
    if (!this.running) return;
    try {
      this.child.kill(sig);
    } catch {
      // Exited between the check and the kill.
    }
  }
}

export function describeExit(exit: ServiceExit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
}
