import { CliError, type CliIo } from '../io.ts';

/** The delivery log's API base URL and bearer token, from the environment. */
export const API_URL_ENV = 'SLUICE_API_URL';
export const API_TOKEN_ENV = 'SLUICE_API_TOKEN';
export const DESTINATION_ACTIONS = ['pause', 'resume', 'disable', 'enable'] as const;
export type DestinationAction = (typeof DESTINATION_ACTIONS)[number];

export interface DestinationActionFlags {
  endpoint?: string;
  reason: string;
  by?: string;
  json?: boolean;
}

interface StateView {
  state: string;
  reason: string | null;
  by: string | null;
  since: string | null;
  auto: boolean;
}

async function api(io: CliIo, method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
  const base = io.env[API_URL_ENV];
  const token = io.env[API_TOKEN_ENV];
  if (!base) throw new CliError(`${API_URL_ENV} is not set (the delivery log's URL, e.g. http://localhost:8084)`, 2);
  if (!token) throw new CliError(`${API_TOKEN_ENV} is not set (deliveryLog.adminToken of the config)`, 2);
  const url = `${base.replace(/\/+$/, '')}${path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (err) {
    const cause =
      (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
    throw new CliError(`cannot reach ${url}: ${cause}`);
  }
  const text = await res.text();
  let parsed: { message?: string } | undefined;
  try {
    parsed = JSON.parse(text) as { message?: string } | undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) throw new CliError(`${method} ${path}: ${res.status} ${parsed?.message ?? text.trim()}`);
  return parsed;
}

const describeState = (s: StateView) =>
  s.state === 'active' && s.since === null
    ? 'active'
    : `${s.state}${s.auto ? ' (auto)' : ''} since ${s.since} by ${s.by}: ${s.reason}`;

/** `sluice destinations list`: each destination and endpoint with its state (GET /api/v1/destinations). */
export async function destinationsList(io: CliIo, flags: { json?: boolean }): Promise<void> {
  const { destinations } = (await api(io, 'GET', '/api/v1/destinations')) as { destinations: unknown };
  if (flags.json) {
    io.stdout(`${JSON.stringify(destinations)}\n`);
    return;
  }
  for (const d of destinations as { id: string; state: StateView; endpointStates: (StateView & { ref: string })[] }[]) {
    io.stdout(`${d.id}  ${describeState(d.state)}\n`);
    for (const e of d.endpointStates) io.stdout(`  ${e.ref}  ${describeState(e)}\n`);
  }
}

/** `sluice destinations pause|resume|disable|enable <id> [--endpoint REF] --reason TEXT` (POST …/<action>). */
export async function destinationAction(
  io: CliIo,
  action: DestinationAction,
  id: string,
  flags: DestinationActionFlags,
): Promise<void> {
  const path =
    flags.endpoint === undefined
      ? `/api/v1/destinations/${encodeURIComponent(id)}/${action}`
      : `/api/v1/destinations/${encodeURIComponent(id)}/endpoints/${encodeURIComponent(flags.endpoint)}/${action}`;
  const result = await api(io, 'POST', path, { reason: flags.reason, ...(flags.by !== undefined && { by: flags.by }) });
  if (flags.json) {
    io.stdout(`${JSON.stringify(result)}\n`);
    return;
  }
  const what = flags.endpoint === undefined ? id : `${id} ${flags.endpoint}`;
  io.stdout(`${what}: ${describeState(result as StateView)}\n`);
}
