import { once } from 'node:events';
import { createInterface } from 'node:readline/promises';
import { CodedError } from '@sluice/errors';

/** Everything a command touches outside itself, so tests run the CLI in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Resolves once stdout can take more (a streaming command waits here, so its output never piles up in memory). */
  stdoutDrained?(): Promise<void>;
  /** The whole of standard input (for `verify`). */
  readStdin(): Promise<Buffer>;
  /** Environment (`KAFKA_BROKERS`, `SLUICE_CONFIG`, `LOG_LEVEL`, secrets for `{ env: NAME }` and `--*-env`). */
  env: NodeJS.ProcessEnv;
  /** True when stderr is a terminal: progress lines are drawn there, and only then. */
  stderrIsTerminal: boolean;
  /** Asks a yes/no question on the terminal; absent when stdin or stderr is not a terminal. */
  confirm?(question: string): Promise<boolean>;
}

/** A failure that ends the command with a message on stderr and a non-zero exit code. */
export class CliError extends CodedError {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    // Not retryable: the command ended; whether to run it again is the user's call.
    super('cli_failed', message, false);
    this.exitCode = exitCode;
  }
}

async function confirmOnTerminal(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

export function processIo(): CliIo {
  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true;
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    stdoutDrained: async () => {
      if (process.stdout.writableNeedDrain) await once(process.stdout, 'drain');
    },
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
    env: process.env,
    stderrIsTerminal: process.stderr.isTTY === true,
    ...(interactive && { confirm: confirmOnTerminal }),
  };
}
