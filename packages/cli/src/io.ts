/** Everything a command touches outside itself, so tests run the CLI in-process. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** The whole of standard input (for `verify`). */
  readStdin(): Promise<Buffer>;
  /** Environment (`KAFKA_BROKERS`, `SLUICE_CONFIG`, `LOG_LEVEL`, secrets for `{ env: NAME }`). */
  env: NodeJS.ProcessEnv;
}

/** A failure that ends the command with a message on stderr and a non-zero exit code. */
export class CliError extends Error {
  readonly code = 'cli_failed';
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
    this.name = 'CliError';
  }
}

export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
    env: process.env,
  };
}
