import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.ts';

/**
 * A secret as the config file writes it: a literal string, `{ env: NAME }` (an environment
 * variable) or `{ file: PATH }` (a file, such as a Kubernetes Secret mounted as a volume).
 */
export type Secret = string | { env: string } | { file: string };

/** Resolves a secret of the field named (the name goes into the error, never the value). */
export type ResolveSecret = (field: string, secret: Secret) => string;

/**
 * Reads `{ env }` from `env` and `{ file }` from the file system when the config is loaded (at
 * start and at each reload). A file's one trailing line break is dropped (`echo` and most secret
 * stores write one); a missing variable, an unreadable or empty file is an error naming the field.
 */
export function secretResolver(env: NodeJS.ProcessEnv): ResolveSecret {
  return (field, secret) => {
    if (typeof secret === 'string') return secret;
    if ('env' in secret) {
      const value = env[secret.env];
      if (value === undefined || value === '') {
        throw new ConfigError(field, `environment variable ${secret.env} is not set`);
      }
      return value;
    }
    let text: string;
    try {
      text = readFileSync(secret.file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(field, `cannot read secret file ${secret.file} (${code})`);
    }
    const value = text.replace(/\r?\n$/, '');
    if (value === '') throw new ConfigError(field, `secret file ${secret.file} is empty`);
    return value;
  };
}
