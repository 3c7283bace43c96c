export {
  type Catalog,
  type CatalogContext,
  type CatalogOutcome,
  type ChangeBy,
  createDestination,
  type CreateRequest,
  deleteDestination,
  type Deleted,
  type PatchRequest,
  patchDestination,
  type Refusal,
  type ReplaceRequest,
  replaceDestination,
  type RotateRequest,
  rotateSecret,
  type VersionedRequest,
  type Written,
} from './changes.ts';
export { DEFAULT_ROTATION_OVERLAP_MS, MAX_RECORD_BYTES, OUTCOME_STATUS } from './constants.ts';
export { CatalogError, CatalogRecordError, CatalogTimeoutError, CatalogUnreadError } from './errors.ts';
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
  type MergedDestinations,
  mergeDestinations,
} from './merge.ts';
export { type CatalogOverlay, layCatalog } from './overlay.ts';
export {
  type CatalogEntry,
  type CatalogRecord,
  clearingRecord,
  type DeletionMark,
  deletionRecord,
  type ParsedRecord,
  parseRecord,
  type RawCatalogRecord,
  serializeEntry,
} from './record.ts';
export { REDACTED, type RedactedEntry, redactEntry } from './redact.ts';
export type { JsonObject } from './secret-fields.ts';
export type { GeneratedSecret } from './signing-secrets.ts';
