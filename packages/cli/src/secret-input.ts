import { readFileSync } from 'node:fs';
import { CliError, type CliIo } from './io.ts';

/** The three ways a secret reaches the CLI: argv (discouraged), an environment variable, a file. */
export interface SecretFlags {
  value?: string;
  env?: string;
  file?: string;
}

/**
 * Reads a secret from exactly one of `--<flag>`, `--<flag>-env NAME` or `--<flag>-file PATH`. A
 * file's one trailing newline (`\n` or `\r\n`) is dropped, as `echo secret > file` writes one.
 */
export function readSecret(io: CliIo, flag: string, flags: SecretFlags): string {
  const given = [flags.value, flags.env, flags.file].filter((v) => v !== undefined).length;
  if (given !== 1) {
    throw new CliError(`give exactly one of --${flag}-env NAME, --${flag}-file PATH or --${flag} VALUE`);
  }
  if (flags.env !== undefined) {
    const value = io.env[flags.env];
    if (value === undefined || value === '') {
      throw new CliError(`--${flag}-env: environment variable ${flags.env} is not set or empty`);
    }
    return value;
  }
  if (flags.file !== undefined) {
    let text: string;
    try {
      text = readFileSync(flags.file, 'utf8');
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new CliError(`--${flag}-file: cannot read ${flags.file}: ${reason}`);
    }
    const value = text.replace(/\r?\n$/, '');
    if (value === '') throw new CliError(`--${flag}-file: ${flags.file} is empty`);
    return value;
  }
  if (flags.value === '') throw new CliError(`--${flag}: must not be empty`);
  return flags.value!;
}
