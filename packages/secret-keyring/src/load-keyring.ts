import { ConfigError, secretResolver } from '@sluice/config';
import { KEY_BYTES, KEY_ID_PATTERN } from './constants.ts';
import { KeyringConfigError } from './errors.ts';
import { Keyring } from './keyring.ts';

/**
 * One key of a ring as the configuration declares it: its id, and where its 32 bytes are read —
 * an environment variable or a file — as 64 hex characters or base64 (44 characters with its
 * padding, or 43 without; standard or URL alphabet). A key is never written in the configuration itself.
 */
export interface KeyringKeyConfig {
  id: string;
  key: { env: string } | { file: string };
}

/** Where `loadKeyring` reads keys, and how its errors name the list. */
export interface LoadKeyringOptions {
  /** Where `{ env }` keys are read; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The field of the key list in errors (`<field>[1].key: …`); default `keyring.keys`. */
  field?: string;
}

const HEX_KEY = new RegExp(`^[0-9a-fA-F]{${KEY_BYTES * 2}}$`);
const BASE64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The key's bytes, or undefined when `text` is neither of the two encodings of 32 bytes. */
function keyBytes(text: string): Buffer | undefined {
  if (HEX_KEY.test(text)) return Buffer.from(text, 'hex');
  if (!BASE64_KEY.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  // Only the one canonical spelling of the bytes: no stray bits in the last character.
  const canonical = bytes.toString(/[-_]/.test(text) ? 'base64url' : 'base64').replace(/=+$/, '');
  return bytes.length === KEY_BYTES && canonical === text.replace(/=$/, '') ? bytes : undefined;
}

/** Where a key reference points, as errors name it. */
const origin = (ref: KeyringKeyConfig['key']) =>
  'env' in ref ? `environment variable ${ref.env}` : `file ${ref.file}`;

function checkReference(field: string, ref: unknown): KeyringKeyConfig['key'] {
  const entries = isObject(ref) ? Object.entries(ref) : [];
  const [name, value] = entries[0] ?? [];
  if (entries.length === 1 && (name === 'env' || name === 'file') && typeof value === 'string' && value !== '')
    return ref as KeyringKeyConfig['key'];
  throw new KeyringConfigError(
    field,
    'must be { env: NAME } or { file: PATH } (a key is never written in the config itself)',
  );
}

/**
 * Reads the keys a keyring is declared with (newest first: the first encrypts) and builds the
 * ring. A missing variable, an unreadable or empty file, or a value that is not 32 bytes as hex or
 * base64 is a `KeyringConfigError` naming the field and the variable or file, never the value.
 */
export function loadKeyring(config: unknown, options: LoadKeyringOptions = {}): Keyring {
  const list = options.field ?? 'keyring.keys';
  if (!Array.isArray(config) || config.length === 0)
    throw new KeyringConfigError(list, 'must be a list of at least one { id, key }');
  const resolve = secretResolver(options.env ?? process.env);
  const keys = config.map((entry: unknown, i) => {
    const field = `${list}[${i}]`;
    if (!isObject(entry)) throw new KeyringConfigError(field, 'must be { id, key }');
    if (typeof entry.id !== 'string' || !KEY_ID_PATTERN.test(entry.id))
      throw new KeyringConfigError(`${field}.id`, `must match ${KEY_ID_PATTERN.source}`);
    const ref = checkReference(`${field}.key`, entry.key);
    let text: string;
    try {
      text = resolve(`${field}.key`, ref);
    } catch (err) {
      if (err instanceof ConfigError) throw new KeyringConfigError(err.field, err.problem, { cause: err });
      throw err;
    }
    const key = keyBytes(text);
    if (key === undefined)
      throw new KeyringConfigError(
        `${field}.key`,
        `${origin(ref)} must hold ${KEY_BYTES} bytes as 64 hex characters (openssl rand -hex 32) or base64 (openssl rand -base64 32), got ${text.length} characters`,
      );
    return { id: entry.id, key };
  });
  const seen = new Set<string>();
  keys.forEach(({ id }, i) => {
    if (seen.has(id)) throw new KeyringConfigError(`${list}[${i}].id`, `duplicate key id ${JSON.stringify(id)}`);
    seen.add(id);
  });
  return new Keyring(keys);
}
