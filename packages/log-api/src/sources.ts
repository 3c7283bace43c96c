import { answerGuard, type Check, isCount, isText, isTime, listOf, objectOf, orNull } from './answer-guard.ts';

/** A write key of a runtime source as the API shows it: its id and times, never the key or its digest. */
export interface WriteKeyItem {
  id: string;
  createdAt: string;
  revokedAt?: string;
}

/** A runtime source as `GET /api/v1/source-definitions` lists it. */
export interface RuntimeSourceItem {
  origin: 'runtime';
  id: string;
  name: string;
  /** The tenant it belongs to (docs/reference/tenants.md). */
  tenant: string;
  version: number;
  updatedAt: string;
  updatedBy: string;
  writeKeys: WriteKeyItem[];
}

/** A source the config file declares: listed read-only, its keys never shown. */
export interface FileSourceItem {
  origin: 'file';
  id: string;
  name: string;
  tenant: string;
  file: string;
}

export type SourceItem = RuntimeSourceItem | FileSourceItem;

/** One page of `GET /api/v1/source-definitions`. */
export interface SourcesPage {
  sources: SourceItem[];
  nextCursor: string | null;
}

const isOptionalTime: Check = (v, p) => (v === undefined ? undefined : isTime(v, p));

const isSource: Check = (value, path) => {
  const origin = (value as { origin?: unknown } | null)?.origin;
  if (origin === 'file')
    return objectOf<FileSourceItem>({ origin: isText, id: isText, name: isText, tenant: isText, file: isText })(
      value,
      path,
    );
  return objectOf<RuntimeSourceItem>({
    origin: (v, p) => (v === 'runtime' ? undefined : p),
    id: isText,
    name: isText,
    tenant: isText,
    version: isCount,
    updatedAt: isTime,
    updatedBy: isText,
    writeKeys: listOf(objectOf<WriteKeyItem>({ id: isText, createdAt: isTime, revokedAt: isOptionalTime })),
  })(value, path);
};

/** Checks an answer of `GET /api/v1/source-definitions`. */
export const sourcesAnswer = answerGuard<SourcesPage>({
  sources: listOf(isSource),
  nextCursor: orNull(isText),
});
