import { type SourceItem, type SourcesPage, sourcesAnswer } from '@sluice/log-api';
import { stringify } from 'yaml';
import { printable, printableJson } from '../domain/printable.ts';
import type { CliIo } from '../io.ts';
import { etagToChange, logApiAnswer, logApiCall } from '../log-api.ts';

const BASE = '/api/v1/source-definitions';
const one = (id: string) => `${BASE}/${encodeURIComponent(id)}`;

/** The flags of the commands that write: JSON output, and the version the change is made on. */
export interface SourceFlags {
  json?: boolean;
  /** The version read (`get` prints it); without it the current one is read first. */
  ifMatch?: string;
}

/** A change's answer as the API gives it. */
interface Written {
  source: { id: string; version: number; writeKeys: { id: string; createdAt: string; revokedAt?: string }[] };
  writeKey?: { id: string; key: string; createdAt: string };
}

/** A change's answer: the source's new version, and the write key minted, shown this once. */
function printWritten(io: CliIo, answer: unknown, flags: SourceFlags): void {
  if (flags.json) {
    io.stdout(`${printableJson(answer)}\n`);
    return;
  }
  const { source, writeKey } = answer as Written;
  io.stdout(`${printable(source.id)}: version ${source.version}\n`);
  if (writeKey !== undefined)
    io.stdout(`  write key ${printable(writeKey.id)} = ${printable(writeKey.key)}  (shown once: keep it now)\n`);
}

/** A change of one source on the version given, or the current one read first. */
async function change(
  io: CliIo,
  request: { method: 'PATCH' | 'POST' | 'DELETE'; id: string; path?: string; body?: unknown },
  flags: SourceFlags,
): Promise<unknown> {
  const ifMatch = await etagToChange(io, {
    path: one(request.id),
    id: request.id,
    ...(flags.ifMatch !== undefined && { ifMatch: flags.ifMatch }),
  });
  const path = request.path ?? one(request.id);
  return (await logApiCall(io, { method: request.method, path, body: request.body, ifMatch })).body;
}

/** `sluice sources create <id> [--name NAME]`: a runtime source and its first write key, printed once (POST). */
export async function sourceCreate(io: CliIo, id: string, flags: SourceFlags & { name?: string }): Promise<void> {
  const body = { id, ...(flags.name !== undefined && { name: flags.name }) };
  printWritten(io, (await logApiCall(io, { method: 'POST', path: BASE, body })).body, flags);
}

/** `sluice sources get <id>`: one source with its version; its keys by id, never the keys. */
export async function sourceGet(io: CliIo, id: string, flags: SourceFlags): Promise<void> {
  const { body, etag } = await logApiCall(io, { method: 'GET', path: one(id) });
  if (flags.json) io.stdout(`${printableJson(body)}\n`);
  else io.stdout(`${etag === null ? '# declared in the config file\n' : `# version ${etag}\n`}${stringify(body)}`);
}

/** One source as a line of `list`: id, where it comes from, its name, and a runtime one's keys in force. */
function describe(source: SourceItem): string {
  const name = source.name === '' ? '' : `  ${printable(source.name)}`;
  if (source.origin === 'file') return `${printable(source.id)}  file ${printable(source.file)}${name}`;
  const inForce = source.writeKeys.filter((k) => k.revokedAt === undefined).map((k) => printable(k.id));
  return `${printable(source.id)}  runtime v${source.version}${name}  keys: ${inForce.join(', ') || 'none'}`;
}

/** `sluice sources list`: every source, the file's and the runtime ones, page after page. */
export async function sourcesList(io: CliIo, flags: { json?: boolean }): Promise<void> {
  const all: SourceItem[] = [];
  let cursor: string | null = null;
  do {
    const query: URLSearchParams = new URLSearchParams({ limit: '500', ...(cursor !== null && { cursor }) });
    const page: SourcesPage = await logApiAnswer(io, `${BASE}?${query}`, sourcesAnswer);
    all.push(...page.sources);
    cursor = page.nextCursor;
  } while (cursor !== null);
  if (flags.json) io.stdout(`${printableJson(all)}\n`);
  else io.stdout(all.map((s) => `${describe(s)}\n`).join(''));
}

/** `sluice sources rename <id> <name>` (PATCH). */
export async function sourceRename(io: CliIo, id: string, flags: SourceFlags & { name: string }): Promise<void> {
  printWritten(io, await change(io, { method: 'PATCH', id, body: { name: flags.name } }, flags), flags);
}

/** `sluice sources delete <id>` (DELETE): refused while a destination names the source. */
export async function sourceDelete(io: CliIo, id: string, flags: SourceFlags): Promise<void> {
  const answer = await change(io, { method: 'DELETE', id }, flags);
  io.stdout(flags.json ? `${printableJson(answer)}\n` : `${printable(id)}: deleted\n`);
}

/** `sluice sources mint-key <id>`: a new write key, printed once (POST …/write-keys). */
export async function sourceMintKey(io: CliIo, id: string, flags: SourceFlags): Promise<void> {
  printWritten(io, await change(io, { method: 'POST', id, path: `${one(id)}/write-keys` }, flags), flags);
}

/** `sluice sources revoke-key <id> <keyId>`: ingest refuses the key once it read the change (DELETE …/write-keys/<keyId>). */
export async function sourceRevokeKey(io: CliIo, id: string, flags: SourceFlags & { keyId: string }): Promise<void> {
  const path = `${one(id)}/write-keys/${encodeURIComponent(flags.keyId)}`;
  const answer = await change(io, { method: 'DELETE', id, path }, flags);
  if (flags.json) io.stdout(`${printableJson(answer)}\n`);
  else
    io.stdout(
      `${printable(id)}: write key ${printable(flags.keyId)} revoked (version ${(answer as Written).source.version})\n`,
    );
}
