import { answerGuard, isCount, isText, listOf, objectOf, orNull, type Check } from './answer-guard.ts';

/** A runtime destination as `GET /api/v1/destination-definitions` lists it: every secret `{ redacted: true }`. */
export interface RuntimeDefinition {
  origin: 'runtime';
  id: string;
  /** The tenant it belongs to (docs/reference/tenants.md). */
  tenant: string;
  sourceIds: string[];
  version: number;
  updatedAt: string;
  updatedBy: string;
  definition: Record<string, unknown>;
}

/** A destination the config file declares: listed read-only. */
export interface FileDefinition {
  origin: 'file';
  id: string;
  tenant: string;
  sourceIds: string[];
  file: string;
}

export type Definition = RuntimeDefinition | FileDefinition;

/** One page of `GET /api/v1/destination-definitions`. */
export interface DefinitionsPage {
  definitions: Definition[];
  nextCursor: string | null;
}

const isDefinition: Check = (value, path) => {
  const origin = (value as { origin?: unknown } | null)?.origin;
  if (origin === 'file')
    return objectOf<FileDefinition>({
      origin: isText,
      id: isText,
      tenant: isText,
      sourceIds: listOf(isText),
      file: isText,
    })(value, path);
  return objectOf<RuntimeDefinition>({
    origin: (v, p) => (v === 'runtime' ? undefined : p),
    id: isText,
    tenant: isText,
    sourceIds: listOf(isText),
    version: isCount,
    updatedAt: isText,
    updatedBy: isText,
    definition: (v, p) => (typeof v === 'object' && v !== null && !Array.isArray(v) ? undefined : p),
  })(value, path);
};

/** Checks an answer of `GET /api/v1/destination-definitions`. */
export const definitionsAnswer = answerGuard<DefinitionsPage>({
  definitions: listOf(isDefinition),
  nextCursor: orNull(isText),
});
