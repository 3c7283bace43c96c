export {
  DecryptionError,
  KeyringConfigError,
  KeyringError,
  MalformedCiphertextError,
  UnknownKeyError,
} from './errors.ts';
export {
  generateSharedSecret,
  generateWebhookSecret,
  generateWriteKey,
  generateWriteKeyId,
  secretDigest,
  WRITE_KEY_PREFIX,
  writeKeyDigest,
} from './generate-secrets.ts';
export { Keyring, type KeyringKey } from './keyring.ts';
export { type KeyringKeyConfig, loadKeyring, type LoadKeyringOptions } from './load-keyring.ts';
