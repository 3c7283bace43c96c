import type { DeliveryRow } from '../../domain/fold.ts';
import { splitMessageKey } from '../../domain/keys.ts';
import type { DeliveryState } from '../../domain/state.ts';
import type { Sql } from './database.ts';
import { ms, recordset, rowsAsJson } from './sql-values.ts';

/** The `deliveries` rows as `DeliveryRow`s (domain/fold.ts): read before a batch's fold, written after it. */

/** The stored delivery rows of the messages `keys` names. */
export async function readDeliveries(tx: Sql, keys: Set<string>): Promise<DeliveryRow[]> {
  if (keys.size === 0) return [];
  const rows = await rowsAsJson<Record<string, unknown>>(
    tx,
    `select d.source_id, d.message_id, d.destination_id, d.state, d.state_at, d.received_at, d.attempts, d.last_error,
       d.dead_reason, d.window_from
     from deliveries d join jsonb_to_recordset($1::text::jsonb) as x("sourceId" text, "messageId" text)
       on d.source_id = x."sourceId" and d.message_id = x."messageId"`,
    [recordset([...keys].map(splitMessageKey))],
  );
  return rows.map((c) => ({
    sourceId: String(c.source_id),
    messageId: String(c.message_id),
    destinationId: String(c.destination_id),
    state: c.state as DeliveryState,
    stateAt: ms(c.state_at),
    receivedAt: ms(c.received_at),
    attempts: Number(c.attempts),
    lastError: (c.last_error as string | null) ?? null,
    deadReason: (c.dead_reason as string | null) ?? null,
    windowFrom: c.window_from === null || c.window_from === undefined ? null : ms(c.window_from),
  }));
}

export async function writeDeliveries(tx: Sql, writes: DeliveryRow[]): Promise<void> {
  if (writes.length === 0) return;
  await tx.query(
    `insert into deliveries (source_id, message_id, destination_id, state, state_at, received_at, attempts,
       last_error, dead_reason, window_from)
     select x."sourceId", x."messageId", x."destinationId", x.state, to_timestamp(x."stateAt" / 1000.0),
       to_timestamp(x."receivedAt" / 1000.0), x.attempts, x."lastError", x."deadReason",
       to_timestamp(x."windowFrom" / 1000.0)
     from jsonb_to_recordset($1::text::jsonb) as x("sourceId" text, "messageId" text, "destinationId" text,
       state text, "stateAt" double precision, "receivedAt" double precision, attempts int, "lastError" text,
       "deadReason" text, "windowFrom" double precision)
     on conflict (source_id, message_id, destination_id) do update set state = excluded.state,
       state_at = excluded.state_at, received_at = excluded.received_at, attempts = excluded.attempts,
       last_error = excluded.last_error, dead_reason = excluded.dead_reason, window_from = excluded.window_from`,
    [recordset(writes)],
  );
}
