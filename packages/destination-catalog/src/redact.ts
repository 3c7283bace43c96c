import type { CatalogEntry } from './record.ts';
import { type JsonObject, mapSecrets } from './secret-fields.ts';
import type { SourceEntry } from './source-record.ts';

/**
 * What stands for every secret of a destination read back. An object rather than a string, so a
 * definition read back and sent again unchanged is refused naming the field (the config takes a
 * secret as a string) instead of storing the mask as the secret.
 */
export const REDACTED: Readonly<{ redacted: true }> = Object.freeze({ redacted: true });

/** A runtime destination as an API returns it: the entry with every secret replaced by `REDACTED`. */
export interface RedactedEntry {
  id: string;
  version: number;
  updatedAt: string;
  updatedBy: string;
  definition: JsonObject;
}

/**
 * The entry as it may be shown: every field the config's schema types as a secret — `webhookUrl`,
 * each endpoint's `url` (credentials, tokens in the path or query) and header values,
 * `sharedSecret`, each signing secret of both schemes — replaced whole by `REDACTED`, never shown
 * in part. Header names, signing windows and every other field are kept.
 */
export function redactEntry(entry: CatalogEntry): RedactedEntry {
  const { id, version, updatedAt, updatedBy } = entry;
  return { id, version, updatedAt, updatedBy, definition: mapSecrets(entry.definition, () => ({ ...REDACTED })) };
}

/** A runtime source as an API returns it: its write keys by id and times, never their digests. */
export interface ShownSource {
  id: string;
  version: number;
  updatedAt: string;
  updatedBy: string;
  name: string;
  tenant: string;
  writeKeys: { id: string; createdAt: string; revokedAt?: string }[];
}

/**
 * The source as it may be shown: each write key's id, when it was minted and revoked. Never its
 * digest: the key has 256 random bits, so the digest would not give it away, but a digest is what
 * ingest finds a key by, and nothing reading the API needs it.
 */
export function showSource(entry: SourceEntry): ShownSource {
  const { id, version, updatedAt, updatedBy } = entry;
  const writeKeys = entry.definition.writeKeys.map(({ id, createdAt, revokedAt }) => ({
    id,
    createdAt,
    ...(revokedAt !== undefined && { revokedAt }),
  }));
  const { name, tenant } = entry.definition;
  return { id, version, updatedAt, updatedBy, name, tenant, writeKeys };
}
