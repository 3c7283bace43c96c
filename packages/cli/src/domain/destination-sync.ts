import { DEFAULT_TENANT } from '@sluice/config';
import type { RuntimeDefinition } from '@sluice/log-api';

type Json = unknown;
type JsonObject = Record<string, unknown>;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const isRedacted = (v: unknown) => isObject(v) && v.redacted === true && Object.keys(v).length === 1;
const SCHEMES = ['xSignature', 'standardWebhooks'] as const;

/**
 * A definition without its signing secrets (`settings.signing.<scheme>.secrets`): the API keeps
 * them when a replace leaves them out, so neither export nor apply carries them.
 */
function withoutSigningSecrets(definition: JsonObject): JsonObject {
  const copy = structuredClone(definition);
  const signing = isObject(copy.settings) && isObject(copy.settings.signing) ? copy.settings.signing : undefined;
  if (signing === undefined) return copy;
  for (const scheme of SCHEMES) {
    const settings = signing[scheme];
    if (!isObject(settings)) continue;
    delete settings.secrets;
    if (Object.keys(settings).length === 0) delete signing[scheme];
  }
  if (Object.keys(signing).length === 0) delete (copy.settings as JsonObject).signing;
  return copy;
}

/** The variable an exported secret is read from: `SLUICE_<ID>_<FIELD>` in upper case, any other character `_`. */
export const secretVariable = (id: string, field: string) =>
  `SLUICE_${id}_${field}`
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')
    .replace(/_+$/, '');

/** `value` with each masked secret (`{ redacted: true }`) replaced by what `swap` makes of its field. */
function mapRedacted(value: Json, field: string, swap: (field: string) => Json): Json {
  if (isRedacted(value)) return swap(field);
  if (Array.isArray(value)) return value.map((v, i) => mapRedacted(v, `${field}[${i}]`, swap));
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, mapRedacted(v, field === '' ? k : `${field}.${k}`, swap)]),
  );
}

/**
 * The runtime destinations as the config file's `destinations` (`sluice destinations export`):
 * each secret, which the API never shows, as `{ env: SLUICE_<ID>_<FIELD> }`, and the signing
 * secrets left out (a replace keeps them).
 */
export function exportDestinations(runtime: readonly RuntimeDefinition[]): { destinations: JsonObject[] } {
  const destinations = [...runtime]
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((d) => mapRedacted(withoutSigningSecrets(d.definition), '', (f) => ({ env: secretVariable(d.id, f) })));
  return { destinations: destinations as JsonObject[] };
}

/**
 * Whether the file's definition says what the runtime one does, by the fields the API shows: a
 * secret the API masks matches whatever the file gives (a value or `{ env }`), so a changed secret
 * alone is not a change (`sluice destinations rotate-secret`, `update`); signing secrets are left out.
 */
function sameShown(file: Json, shown: Json): boolean {
  if (isRedacted(shown)) return true;
  if (Array.isArray(shown))
    return Array.isArray(file) && file.length === shown.length && shown.every((v, i) => sameShown(file[i], v));
  if (isObject(shown)) {
    if (!isObject(file)) return false;
    const keys = new Set([...Object.keys(file), ...Object.keys(shown)]);
    return [...keys].every((k) => sameShown(file[k], shown[k]));
  }
  return file === shown;
}

/**
 * The top-level fields two definitions differ in, by the fields the API shows. A file's definition
 * without `tenant` is in the default tenant (docs/reference/tenants.md), as the API shows it.
 */
function changedFields(file: JsonObject, shown: JsonObject): string[] {
  const inFile: JsonObject = { tenant: DEFAULT_TENANT, ...file };
  const keys = [...new Set([...Object.keys(inFile), ...Object.keys(shown)])].sort();
  return keys.filter((k) => !sameShown(inFile[k], shown[k] ?? (k === 'tenant' ? DEFAULT_TENANT : undefined)));
}

export type SyncStep =
  | { kind: 'create'; id: string; definition: JsonObject }
  | { kind: 'update'; id: string; version: number; definition: JsonObject; fields: string[] }
  | { kind: 'delete'; id: string; version: number };

/**
 * What makes the runtime destinations match the file's `destinations` (`sluice destinations apply`):
 * create those only the file has, replace those that differ, delete those only the catalog has;
 * one the file has unchanged takes no step. Sorted by id; throws on a definition with no id or an id twice.
 */
export function planSync(file: readonly unknown[], runtime: readonly RuntimeDefinition[]): SyncStep[] {
  const byId = new Map(runtime.map((d) => [d.id, d]));
  const seen = new Set<string>();
  const steps: SyncStep[] = [];
  file.forEach((raw, i) => {
    if (!isObject(raw) || typeof raw.id !== 'string') throw new Error(`destinations[${i}].id is required`);
    if (seen.has(raw.id)) throw new Error(`destinations[${i}].id: ${raw.id} is given twice`);
    seen.add(raw.id);
    const current = byId.get(raw.id);
    const definition = withoutSigningSecrets(raw);
    if (current === undefined) steps.push({ kind: 'create', id: raw.id, definition: raw });
    else {
      const fields = changedFields(definition, withoutSigningSecrets(current.definition));
      if (fields.length > 0)
        steps.push({ kind: 'update', id: raw.id, version: current.version, definition: raw, fields });
    }
  });
  for (const d of runtime) if (!seen.has(d.id)) steps.push({ kind: 'delete', id: d.id, version: d.version });
  return steps.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** A step as `apply` prints it: `+ id`, `~ id (fields)`, `- id`. */
export const describeStep = (step: SyncStep) =>
  step.kind === 'create'
    ? `+ ${step.id}`
    : step.kind === 'update'
      ? `~ ${step.id} (${step.fields.join(', ')})`
      : `- ${step.id}`;

/**
 * A definition to send: each `{ env: NAME }` read from `env` (the API takes secrets themselves);
 * a variable that is not set, or a masked secret, throws naming the field.
 */
export function resolveSecrets(definition: JsonObject, env: NodeJS.ProcessEnv): JsonObject {
  const walk = (value: Json, field: string): Json => {
    if (isRedacted(value)) throw new Error(`${field}: a masked secret; give the secret or { env: NAME }`);
    if (isObject(value) && typeof value.env === 'string' && Object.keys(value).length === 1) {
      const secret = env[value.env];
      if (secret === undefined || secret === '')
        throw new Error(`${field}: environment variable ${value.env} is not set`);
      return secret;
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, `${field}[${i}]`));
    if (!isObject(value)) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, field === '' ? k : `${field}.${k}`)]));
  };
  return walk(definition, '') as JsonObject;
}
