import { readConfigFile } from '@sluice/config';
import { type DefinitionsPage, definitionsAnswer, type RuntimeDefinition } from '@sluice/log-api';
import { stringify } from 'yaml';
import {
  describeStep,
  exportDestinations,
  planSync,
  resolveSecrets,
  type SyncStep,
} from '../domain/destination-sync.ts';
import { printable, printableJson } from '../domain/printable.ts';
import { CliError, type CliIo } from '../io.ts';
import { etagToChange, logApiAnswer, logApiCall } from '../log-api.ts';

const BASE = '/api/v1/destination-definitions';
const one = (id: string) => `${BASE}/${encodeURIComponent(id)}`;

/** The flags of the commands that write: JSON output, and the version the change is made on. */
export interface DefinitionFlags {
  json?: boolean;
  /** The version read (`get` prints it); without it the current one is read first. */
  ifMatch?: string;
}

/** A definition from a file (YAML or JSON: one destination), its `{ env }` secrets read from the environment. */
function definitionFile(io: CliIo, path: string): Record<string, unknown> {
  const raw = readConfigFile(path);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new CliError(`${path}: not one destination definition`);
  try {
    return resolveSecrets(raw as Record<string, unknown>, io.env);
  } catch (err) {
    throw new CliError(`${path}: ${(err as Error).message}`);
  }
}

/** A change's answer: the destination's new version, and each secret generated, shown this once. */
function printWritten(io: CliIo, answer: unknown, flags: DefinitionFlags): void {
  if (flags.json) {
    io.stdout(`${printableJson(answer)}\n`);
    return;
  }
  const { destination, secrets } = answer as {
    destination: { id: string; version: number };
    secrets: { field: string; secret: string }[];
  };
  io.stdout(`${printable(destination.id)}: version ${destination.version}\n`);
  for (const s of secrets) io.stdout(`  ${printable(s.field)} = ${printable(s.secret)}  (shown once: keep it now)\n`);
}

/** The ETag of the version to change: the one given, else the current one read now. */
const versionOf = (io: CliIo, id: string, flags: DefinitionFlags) =>
  etagToChange(io, { path: one(id), id, ...(flags.ifMatch !== undefined && { ifMatch: flags.ifMatch }) });

/** `sluice destinations create -f FILE`: a runtime destination from a definition file (POST). */
export async function definitionCreate(io: CliIo, file: string, flags: DefinitionFlags): Promise<void> {
  const { body } = await logApiCall(io, { method: 'POST', path: BASE, body: definitionFile(io, file) });
  printWritten(io, body, flags);
}

/** `sluice destinations get <id>`: one destination, secrets masked, with its version. */
export async function definitionGet(io: CliIo, id: string, flags: DefinitionFlags): Promise<void> {
  const { body, etag } = await logApiCall(io, { method: 'GET', path: one(id) });
  if (flags.json) io.stdout(`${printableJson(body)}\n`);
  else io.stdout(`${etag === null ? '# declared in the config file\n' : `# version ${etag}\n`}${stringify(body)}`);
}

/** `sluice destinations update <id> -f FILE` (PUT, the whole definition) or `--patch FILE` (a JSON Merge Patch). */
export async function definitionUpdate(
  io: CliIo,
  id: string,
  flags: DefinitionFlags & { file?: string; patch?: string },
): Promise<void> {
  const path = flags.file ?? flags.patch;
  if (path === undefined || (flags.file !== undefined && flags.patch !== undefined))
    throw new CliError('give one of -f FILE (the whole definition) or --patch FILE (a JSON Merge Patch)', 2);
  const method = flags.file !== undefined ? 'PUT' : 'PATCH';
  const body = definitionFile(io, path);
  const { body: answer } = await logApiCall(io, {
    method,
    path: one(id),
    body,
    ifMatch: await versionOf(io, id, flags),
  });
  printWritten(io, answer, flags);
}

/** `sluice destinations delete <id>`. */
export async function definitionDelete(io: CliIo, id: string, flags: DefinitionFlags): Promise<void> {
  const ifMatch = await versionOf(io, id, flags);
  const { body } = await logApiCall(io, { method: 'DELETE', path: one(id), ifMatch });
  io.stdout(flags.json ? `${printableJson(body)}\n` : `${printable(id)}: deleted\n`);
}

/** `sluice destinations rotate-secret <id> [--scheme S] [--overlap-ms N]`: the new secret, shown once. */
export async function definitionRotate(
  io: CliIo,
  id: string,
  flags: DefinitionFlags & { scheme?: string; overlapMs?: string },
): Promise<void> {
  const body = {
    ...(flags.scheme !== undefined && { scheme: flags.scheme }),
    ...(flags.overlapMs !== undefined && { overlapMs: Number(flags.overlapMs) }),
  };
  const ifMatch = await versionOf(io, id, flags);
  const { body: answer } = await logApiCall(io, { method: 'POST', path: `${one(id)}/rotate-secret`, body, ifMatch });
  printWritten(io, answer, flags);
}

/** Every runtime destination, page after page. */
async function runtimeDefinitions(io: CliIo): Promise<RuntimeDefinition[]> {
  const all: RuntimeDefinition[] = [];
  let cursor: string | null = null;
  do {
    const query: URLSearchParams = new URLSearchParams({ limit: '500', ...(cursor !== null && { cursor }) });
    const page: DefinitionsPage = await logApiAnswer(io, `${BASE}?${query}`, definitionsAnswer);
    for (const d of page.definitions) if (d.origin === 'runtime') all.push(d);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return all;
}

/** `sluice destinations export`: the runtime destinations in the config file's format (YAML, `--json`). */
export async function definitionsExport(io: CliIo, flags: { json?: boolean }): Promise<void> {
  const exported = exportDestinations(await runtimeDefinitions(io));
  if (flags.json) {
    io.stdout(`${JSON.stringify(exported)}\n`);
    return;
  }
  io.stdout(
    '# Runtime destinations (sluice destinations export). Secrets are never shown: each reads from the\n' +
      '# variable named; signing secrets are left out and kept. `sluice destinations apply -f` takes this file.\n',
  );
  io.stdout(stringify(exported));
}

/** `sluice destinations apply -f FILE [--dry-run]`: the runtime destinations made to match the file's `destinations`. */
export async function definitionsApply(
  io: CliIo,
  file: string,
  flags: { dryRun?: boolean; json?: boolean },
): Promise<void> {
  const raw = readConfigFile(file) as { destinations?: unknown } | null;
  const listed = raw?.destinations ?? [];
  if (!Array.isArray(listed)) throw new CliError(`${file}: destinations must be a list`);
  let steps: SyncStep[];
  try {
    steps = planSync(listed, await runtimeDefinitions(io));
  } catch (err) {
    throw new CliError(`${file}: ${(err as Error).message}`);
  }
  const lines = steps.map(describeStep);
  if (flags.json) io.stdout(`${JSON.stringify({ steps: lines, dryRun: flags.dryRun === true })}\n`);
  else io.stdout(lines.length === 0 ? 'no changes\n' : `${lines.map(printable).join('\n')}\n`);
  if (flags.dryRun) return;
  // Every secret is read before the first change, so a variable not set changes nothing.
  const ready = steps.map((step) => withSecrets(io, step));
  for (const step of ready) await applyStep(io, step);
  if (!flags.json && steps.length > 0) io.stdout(`applied ${steps.length} change(s)\n`);
}

/** A step with its definition's `{ env }` secrets read from the environment. */
function withSecrets(io: CliIo, step: SyncStep): SyncStep {
  if (step.kind === 'delete') return step;
  try {
    return { ...step, definition: resolveSecrets(step.definition, io.env) };
  } catch (err) {
    throw new CliError(`destination ${step.id}: ${(err as Error).message}`);
  }
}

/** One step through the API, made on the version the plan read (a change since is a 412). */
async function applyStep(io: CliIo, step: SyncStep): Promise<void> {
  if (step.kind === 'create') await logApiCall(io, { method: 'POST', path: BASE, body: step.definition });
  else {
    const request = { path: one(step.id), ifMatch: `"${step.version}"` };
    if (step.kind === 'update') await logApiCall(io, { method: 'PUT', ...request, body: step.definition });
    else await logApiCall(io, { method: 'DELETE', ...request });
  }
}
