import { type CliIo, runCli } from '@sluice/cli';

/**
 * An in-memory CliIo: captures stdout/stderr, feeds the given stdin. `terminal` makes stderr a
 * terminal (progress lines) and answers confirmations with `answer`.
 */
export function memoryIo(
  stdin: Buffer | string = '',
  env: NodeJS.ProcessEnv = process.env,
  terminal?: { answer: boolean },
) {
  const out: string[] = [];
  const err: string[] = [];
  const questions: string[] = [];
  const io: CliIo = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    readStdin: async () => Buffer.from(stdin),
    env,
    stderrIsTerminal: terminal !== undefined,
    ...(terminal && {
      confirm: async (question: string) => {
        questions.push(question);
        return terminal.answer;
      },
    }),
  };
  return { io, stdout: () => out.join(''), stderr: () => err.join(''), questions };
}

/** Runs the CLI in-process with `env` and `--config <configPath()>` after the given arguments. */
export function configuredCli(env: NodeJS.ProcessEnv, configPath: () => string) {
  return async (...args: string[]) => {
    const io = memoryIo('', env);
    const code = await runCli([...args, '--config', configPath()], io.io);
    return { code, stdout: io.stdout(), stderr: io.stderr() };
  };
}
