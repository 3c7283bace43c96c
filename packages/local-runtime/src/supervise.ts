// A server process (a JVM, postgres) run under the watchdog (watchdog.mjs), so that it dies with
// the Node process that started it however that process ends: the watchdog is its parent, in its
// own session (a Ctrl-C in the terminal reaches only the owner, which decides what to do), and
// kills it when the owner is gone. Neither the watchdog nor its channel keeps the owner alive; the
// owner's exit hook SIGKILLs what is still running.

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { atExit } from './exit-hook.ts';

const WATCHDOG = fileURLToPath(new URL('./watchdog.mjs', import.meta.url));
const SPAWN_TIMEOUT_MS = 10_000;
const DEFAULT_STOP_GRACE_MS = 15_000;

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface SuperviseOptions {
  /** Name for error messages: `local-kafka`. */
  name: string;
  /** Receives the server's stdout and stderr (appended). */
  logFile: string;
  /** The server's working directory. Default: `cleanupDir`. */
  cwd?: string;
  /** Removed by the watchdog once the server is gone, if the owner died first. */
  cleanupDir?: string;
  /** Default: this process's environment, without NODE_OPTIONS (no preloads in the watchdog). */
  env?: NodeJS.ProcessEnv;
  /** Run the server as this user and group. */
  uid?: number;
  gid?: number;
  /** The signal `stop()` sends. Default SIGTERM. */
  stopSignal?: NodeJS.Signals;
  /** How long `stop()` and `kill()` wait before (another) SIGKILL. Default 15 000 ms. */
  stopGraceMs?: number;
}

export interface Supervised {
  /** The server's pid (not the watchdog's). */
  readonly pid: number;
  /** The directory the watchdog removes if the owner dies, if any. */
  readonly cleanupDir: string | undefined;
  /** True until the server has exited. */
  readonly running: boolean;
  /** How it exited, once it has. */
  readonly exitInfo: ChildExit | undefined;
  /** Settles when the server and its watchdog are gone. */
  readonly exited: Promise<ChildExit>;
  /** The stop signal, SIGKILL after the grace period; resolves once it is gone. */
  stop(): Promise<ChildExit>;
  /** SIGKILL; resolves once it is gone. */
  kill(): Promise<ChildExit>;
}

const live = new Set<Supervised>();

/** True while a supervised server that the watchdog would clean `dir` after is running. */
export function supervisesDir(dir: string): boolean {
  for (const s of live) if (s.running && s.cleanupDir === dir) return true;
  return false;
}

/** Starts `command` under the watchdog; resolves once it has been spawned (not once it is ready). */
export async function supervise(command: string, args: string[], options: SuperviseOptions): Promise<Supervised> {
  const env = options.env ?? withoutNodeOptions(process.env);
  const flags = [
    ...(options.cleanupDir !== undefined ? ['--cleanup', options.cleanupDir] : []),
    ...(options.uid !== undefined ? ['--uid', String(options.uid)] : []),
    ...(options.gid !== undefined ? ['--gid', String(options.gid)] : []),
  ];
  const fd = openSync(options.logFile, 'a');
  let watchdog: ChildProcess;
  try {
    watchdog = spawn(process.execPath, [WATCHDOG, ...flags, '--', command, ...args], {
      detached: true,
      stdio: ['ignore', fd, fd, 'ipc'],
      env,
      ...((options.cwd ?? options.cleanupDir) !== undefined && { cwd: options.cwd ?? options.cleanupDir }),
    });
  } finally {
    closeSync(fd);
  }
  watchdog.unref();
  watchdog.channel?.unref();
  const pid = await spawned(watchdog, options.name, command);
  return new Server(watchdog, pid, options);
}

function withoutNodeOptions(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.NODE_OPTIONS;
  return copy;
}

class Server implements Supervised {
  readonly pid: number;
  readonly cleanupDir: string | undefined;
  exitInfo: ChildExit | undefined;
  readonly exited: Promise<ChildExit>;
  readonly #watchdog: ChildProcess;
  readonly #stopSignal: NodeJS.Signals;
  readonly #graceMs: number;

  constructor(watchdog: ChildProcess, pid: number, options: SuperviseOptions) {
    this.#watchdog = watchdog;
    this.pid = pid;
    this.cleanupDir = options.cleanupDir;
    this.#stopSignal = options.stopSignal ?? 'SIGTERM';
    this.#graceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
    let reported: ChildExit | undefined;
    watchdog.on('message', (raw) => {
      const m = raw as { type: string; code?: number | null; signal?: NodeJS.Signals | null };
      // The server is gone (reaped by the watchdog); the watchdog itself follows.
      if (m.type === 'exit') reported = this.exitInfo = { code: m.code ?? null, signal: m.signal ?? null };
    });
    live.add(this);
    const unregister = atExit(() => this.#signal('SIGKILL'));
    // 'close': the watchdog has exited and its channel is closed, so both processes are gone.
    this.exited = new Promise((resolve) => {
      watchdog.once('close', (code, sig) => {
        const info = reported ?? watchdogExit(code, sig);
        this.exitInfo = info;
        live.delete(this);
        unregister();
        resolve(info);
      });
    });
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  stop(): Promise<ChildExit> {
    return this.#end(this.#stopSignal);
  }

  kill(): Promise<ChildExit> {
    return this.#end('SIGKILL');
  }

  async #end(sig: NodeJS.Signals): Promise<ChildExit> {
    if (this.running) {
      // Tell the watchdog the owner itself is stopping the server, so it need not linger.
      if (this.#watchdog.connected) {
        try {
          this.#watchdog.send({ type: 'stopping' });
        } catch {
          // watchdog gone
        }
      }
      this.#signal(sig);
    }
    // The timer also keeps the event loop alive meanwhile (the watchdog itself is unref'd).
    const timer = setTimeout(() => this.#signal('SIGKILL'), this.#graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  #signal(sig: NodeJS.Signals): void {
    if (!this.running) return;
    try {
      process.kill(this.pid, sig);
    } catch {
      // already gone
    }
  }
}

/** The watchdog's own exit status stands in when the server's was not reported. */
function watchdogExit(code: number | null, sig: NodeJS.Signals | null): ChildExit {
  return {
    code: code !== null && code < 128 ? code : null,
    signal: sig ?? (code === 137 ? 'SIGKILL' : code === 143 ? 'SIGTERM' : null),
  };
}

/** The server's pid, once the watchdog has spawned it. */
function spawned(watchdog: ChildProcess, name: string, command: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      done();
      reject(new Error(`${name}: the watchdog did not start ${command} within ${SPAWN_TIMEOUT_MS / 1000} s`));
    }, SPAWN_TIMEOUT_MS);
    const onMessage = (raw: unknown) => {
      const m = raw as { type: string; pid?: number; message?: string };
      if (m.type === 'spawned' && typeof m.pid === 'number') {
        done();
        resolve(m.pid);
      } else if (m.type === 'error') {
        done();
        reject(new Error(`${name}: cannot run ${command}: ${m.message ?? 'spawn failed'}`));
      }
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    const onClose = (code: number | null, sig: NodeJS.Signals | null) => {
      done();
      reject(new Error(`${name}: the watchdog exited (${code ?? sig}) before starting ${command}`));
    };
    const done = () => {
      clearTimeout(timer);
      watchdog.off('message', onMessage);
      watchdog.off('error', onError);
      watchdog.off('close', onClose);
    };
    watchdog.on('message', onMessage);
    watchdog.on('error', onError);
    watchdog.on('close', onClose);
  });
}
