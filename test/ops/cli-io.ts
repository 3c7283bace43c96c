import type { CliIo } from '@sluice/cli';

/** An in-memory CliIo: captures stdout/stderr, feeds the given stdin. */
export function memoryIo(stdin: Buffer | string = '', env: NodeJS.ProcessEnv = process.env) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    readStdin: async () => Buffer.from(stdin),
    env,
  };
  return { io, stdout: () => out.join(''), stderr: () => err.join('') };
}
