import { portalLinkAnswer } from '@sluice/log-api';
import { escapeControls } from '@sluice/logging';
import { printable, printableJson } from '../domain/printable.ts';
import type { CliIo } from '../io.ts';
import { logApiCheckedCall } from '../log-api.ts';

/** What `portal-links create` asks for (docs/reference/portal-links.md). */
export interface PortalLinkFlags {
  /** The admin's choice; a tenant token mints for its own tenant. */
  tenant?: string;
  destination?: string;
  /** Milliseconds, as given on the command line; absent: the API's default (1 hour). */
  ttlMs?: string;
  json?: boolean;
}

/** `sluice portal-links create [--tenant T] [--destination ID] [--ttl-ms N]`: the link's URL printed. */
export async function portalLinkCreate(io: CliIo, flags: PortalLinkFlags): Promise<void> {
  const body = {
    ...(flags.tenant !== undefined && { tenant: flags.tenant }),
    ...(flags.destination !== undefined && { destinationId: flags.destination }),
    ...(flags.ttlMs !== undefined && { ttlMs: Number(flags.ttlMs) }),
  };
  const link = await logApiCheckedCall(io, { method: 'POST', path: '/api/v1/portal-links', body }, portalLinkAnswer);
  if (flags.json) {
    io.stdout(`${printableJson(link)}\n`);
    return;
  }
  // The link is what was asked for: printed whole (controls escaped), not redacted as a URL read from a topic is.
  io.stdout(`${escapeControls(link.url)}\n  link ${printable(link.id)}, expires ${printable(link.expiresAt)}\n`);
}
