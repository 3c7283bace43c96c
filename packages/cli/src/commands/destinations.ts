import { printable, printableJson } from '../domain/printable.ts';
import type { CliIo } from '../io.ts';
import { logApi as api } from '../log-api.ts';

export const DESTINATION_ACTIONS = ['pause', 'resume', 'disable', 'enable'] as const;
export type DestinationAction = (typeof DESTINATION_ACTIONS)[number];

export interface DestinationActionFlags {
  endpoint?: string;
  reason: string;
  json?: boolean;
}

interface StateView {
  state: string;
  reason: string | null;
  by: string | null;
  since: string | null;
  auto: boolean;
}

/**
 * A state as one line, with the id of the token that set it when known (`token`, an action's
 * `byTokenId`); `reason` and `by` are any text an API caller sent, so they go through `printable`.
 */
const describeState = (s: StateView, token?: string) =>
  s.state === 'active' && s.since === null
    ? 'active'
    : `${printable(s.state)}${s.auto ? ' (auto)' : ''} since ${printable(String(s.since))} by ${printable(String(s.by))}${token === undefined ? '' : ` (token ${printable(token)})`}: ${printable(String(s.reason))}`;

/** `sluice destinations list`: each destination and endpoint with its state (GET /api/v1/destinations). */
export async function destinationsList(io: CliIo, flags: { json?: boolean }): Promise<void> {
  const { destinations } = (await api(io, 'GET', '/api/v1/destinations')) as { destinations: unknown };
  if (flags.json) {
    io.stdout(`${printableJson(destinations)}\n`);
    return;
  }
  for (const d of destinations as { id: string; state: StateView; endpointStates: (StateView & { ref: string })[] }[]) {
    io.stdout(`${printable(d.id)}  ${describeState(d.state)}\n`);
    for (const e of d.endpointStates) io.stdout(`  ${printable(e.ref)}  ${describeState(e)}\n`);
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
  const result = await api(io, 'POST', path, { reason: flags.reason });
  if (flags.json) {
    io.stdout(`${printableJson(result)}\n`);
    return;
  }
  const what = flags.endpoint === undefined ? id : `${id} ${flags.endpoint}`;
  const recorded = (result as { action?: { byTokenId?: unknown } }).action;
  const token = typeof recorded?.byTokenId === 'string' ? recorded.byTokenId : undefined;
  io.stdout(`${what}: ${describeState(result as StateView, token)}\n`);
}
