import { readFileSync } from 'node:fs';
import { MIN_BEARER_TOKEN_CHARS } from './constants.ts';
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

/**
 * A bearer token that guards one of Sluice's own APIs, resolved and held to `MIN_BEARER_TOKEN_CHARS`
 * characters, so it cannot be guessed (the error names the field and the length, never the value).
 */
export function resolveBearerToken(resolve: ResolveSecret, field: string, secret: Secret): string {
  const token = resolve(field, secret);
  const chars = [...token].length;
  if (chars < MIN_BEARER_TOKEN_CHARS)
    throw new ConfigError(
      field,
      `must be at least ${MIN_BEARER_TOKEN_CHARS} characters, got ${chars} (generate one: openssl rand -hex 32)`,
    );
  return token;
}
