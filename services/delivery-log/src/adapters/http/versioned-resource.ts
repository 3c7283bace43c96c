import type { RecordKind } from '@sluice/destination-catalog';

/**
 * One kind of runtime resource the API changes at an expected version (`If-Match`), with its audit:
 * the names its routes and its part of the OpenAPI document are built from, so both say the same.
 */
export interface VersionedResource {
  /** What it is, in messages, error codes and the audit's log line. */
  kind: RecordKind;
  /** The name in operation ids and schema names: `Definition` gives `listDefinitions`, `DefinitionChanges`. */
  name: string;
  /** The collection's path; one of them is `<base>/{<idName>}`. */
  base: string;
  /** The audit's path. */
  changes: string;
  /** The path parameter that names one, and the audit's filter. */
  idName: 'destinationId' | 'sourceId';
}

/** Runtime destinations (docs/reference/runtime-destinations.md, "API"). */
export const DESTINATION_RESOURCE: VersionedResource = {
  kind: 'destination',
  name: 'Definition',
  base: '/api/v1/destination-definitions',
  changes: '/api/v1/destination-changes',
  idName: 'destinationId',
};

/** Runtime sources (docs/reference/runtime-sources.md, "API"). */
export const SOURCE_RESOURCE: VersionedResource = {
  kind: 'source',
  name: 'Source',
  base: '/api/v1/source-definitions',
  changes: '/api/v1/source-changes',
  idName: 'sourceId',
};
