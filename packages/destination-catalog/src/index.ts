export {
  type Catalog,
  type CatalogContext,
  type ChangeBy,
  type Deleted,
  emptyCatalog,
  type Refusal,
  sourceIdsInForce,
  type VersionedRequest,
} from './change-basics.ts';
export {
  type CatalogOutcome,
  createDestination,
  type CreateRequest,
  deleteDestination,
  type PatchRequest,
  patchDestination,
  type ReplaceRequest,
  replaceDestination,
  type RotateRequest,
  rotateSecret,
  type Written,
} from './changes.ts';
export {
  createSource,
  type CreateSourceRequest,
  deleteSource,
  type MintedWriteKey,
  mintWriteKey,
  type RenameSourceRequest,
  renameSource,
  type RevokeWriteKeyRequest,
  revokeWriteKey,
  type SourceOutcome,
  type SourceWritten,
} from './source-changes.ts';
export {
  DEFAULT_ROTATION_OVERLAP_MS,
  MAX_ACTIVE_WRITE_KEYS,
  MAX_RECORD_BYTES,
  MAX_REVOKED_WRITE_KEYS,
  MAX_TOKENS,
  OUTCOME_STATUS,
} from './constants.ts';
export {
  CatalogError,
  CatalogKeyringError,
  CatalogRecordError,
  CatalogTimeoutError,
  CatalogUnreadError,
} from './errors.ts';
export type { CatalogChange, RecordTrack, TrackedVerdict } from './catalog-follower.ts';
export type { Verdict } from './catalog-state.ts';
export { type CatalogReader, type CatalogReaderOptions, startCatalogReader } from './kafka/catalog-reader.ts';
export {
  type CatalogProducer,
  type CatalogView,
  CatalogWriter,
  type CatalogWriterOptions,
} from './kafka/catalog-writer.ts';
export type { FileConfig } from './file-config.ts';
export {
  type IgnoredDestination,
  type IgnoredSource,
  type MergedDestinations,
  mergeDestinations,
  mergeSources,
} from './merge.ts';
export type { CatalogRecord, DeletionMark } from './envelope.ts';
export { type CatalogOverlay, layCatalog } from './overlay.ts';
export {
  type CatalogEntry,
  clearingRecord,
  deletionRecord,
  type ParsedRecord,
  parseRecord,
  type RawCatalogRecord,
  serializeEntry,
  tenantOfDefinition,
} from './record.ts';
export {
  type CreateTokenRequest,
  createToken,
  type RevokeTokenRequest,
  revokeToken,
  type TokenCreated,
  type TokenOutcome,
} from './token-changes.ts';
export { type TokenDefinition, tokenDigest, type TokenEntry } from './token-record.ts';
export { nameOf, type RecordKind, type Subject, subjectOfKey } from './record-key.ts';
export { REDACTED, type RedactedEntry, redactEntry, type ShownSource, showSource } from './redact.ts';
export type { JsonObject } from './secret-fields.ts';
export type { GeneratedSecret } from './signing-secrets.ts';
export {
  keysInForce,
  type SourceDefinition,
  type SourceEntry,
  serializeSource,
  type StoredWriteKey,
} from './source-record.ts';
