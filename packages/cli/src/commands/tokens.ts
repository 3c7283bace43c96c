import { type TokenItem, tokenCreatedAnswer, tokensAnswer } from '@sluice/log-api';
import { printable, printableJson } from '../domain/printable.ts';
import type { CliIo } from '../io.ts';
import { logApiAnswer, logApiCall, logApiCheckedCall } from '../log-api.ts';

const BASE = '/api/v1/tokens';

/** What `tokens create` asks for (docs/reference/tokens.md). */
export interface TokenCreateFlags {
  tenant: string;
  role: string;
  /** RFC 3339; absent: the token does not expire. */
  expiresAt?: string;
  json?: boolean;
}

/** One token as a line: id, name, tenant, role, expiry; never the token. */
function describe(t: TokenItem): string {
  const expires = t.expiresAt === undefined ? 'no expiry' : `expires ${printable(t.expiresAt)}`;
  return `${printable(t.id)}  ${printable(t.name)}  tenant ${printable(t.tenant)}  ${printable(t.role)}  ${expires}`;
}

/** `sluice tokens create <name> --tenant T --role read|manage [--expires-at TIME]`: the token printed once. */
export async function tokenCreate(io: CliIo, name: string, flags: TokenCreateFlags): Promise<void> {
  const body = {
    name,
    tenant: flags.tenant,
    role: flags.role,
    ...(flags.expiresAt !== undefined && { expiresAt: flags.expiresAt }),
  };
  const created = await logApiCheckedCall(io, { method: 'POST', path: BASE, body }, tokenCreatedAnswer);
  if (flags.json) {
    io.stdout(`${printableJson(created)}\n`);
    return;
  }
  io.stdout(`${describe(created.token)}\n  token = ${printable(created.secret)}  (shown once: keep it now)\n`);
}

/** `sluice tokens list`: the tenant tokens in force. */
export async function tokensList(io: CliIo, flags: { json?: boolean }): Promise<void> {
  const { tokens } = await logApiAnswer(io, BASE, tokensAnswer);
  io.stdout(flags.json ? `${printableJson(tokens)}\n` : tokens.map((t) => `${describe(t)}\n`).join(''));
}

/** `sluice tokens revoke <id>`: every delivery-log replica refuses the token within a second. */
export async function tokenRevoke(io: CliIo, id: string, flags: { json?: boolean }): Promise<void> {
  const { body: answer } = await logApiCall(io, { method: 'DELETE', path: `${BASE}/${encodeURIComponent(id)}` });
  io.stdout(flags.json ? `${printableJson(answer)}\n` : `${printable(id)}: revoked\n`);
}
