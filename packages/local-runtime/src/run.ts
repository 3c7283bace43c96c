import { spawn } from 'node:child_process';

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Run as this user and group (a root owner running a server that refuses root). */
  uid?: number;
  gid?: number;
  /** How much of the combined output to keep, from its end. Default 20 000 characters. */
  keepChars?: number;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The end of stdout and stderr, interleaved as they came. */
  output: string;
}

/**
 * Runs a short-lived command (an installer, a storage tool) to its end, collecting its output.
 * Rejects only when it cannot be started (the error's `code` is e.g. `ENOENT`); a non-zero exit
 * is the caller's to judge.
 */
export function runToCompletion(command: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const keep = options.keepChars ?? 20_000;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(options.cwd !== undefined && { cwd: options.cwd }),
      ...(options.env !== undefined && { env: options.env }),
      ...(options.uid !== undefined && { uid: options.uid }),
      ...(options.gid !== undefined && { gid: options.gid }),
    });
    let output = '';
    const collect = (b: Buffer) => {
      output = (output + b.toString()).slice(-keep);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, output }));
  });
}
