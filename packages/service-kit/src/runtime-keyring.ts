import type { ConfigStore } from '@sluice/config';
import { type Keyring, loadKeyring } from '@sluice/secret-keyring';

/**
 * The keyring of the runtime destinations when the config turns them on (`runtimeDestinations`),
 * its keys read from their variables or files; undefined when it is off. Throws
 * `KeyringConfigError` naming the field and the variable or file when a key cannot be loaded.
 */
export function runtimeKeyring(config: ConfigStore): Keyring | undefined {
  const section = config.current.runtimeDestinations;
  if (section === undefined) return undefined;
  return loadKeyring(section.keyring, { env: config.env, field: 'runtimeDestinations.keyring' });
}
