import { type DestinationActionRecord, stateKey } from '@sluice/destination-state';
import { MAX_TIME_MS, MIN_TIME_MS } from '../../constants.ts';
import { cutPage, decodeTimeCursor, encodeTimeCursor } from '../../domain/cursor.ts';
import { storableText } from '../../domain/storable-text.ts';
import type { Sql } from './database.ts';
import { iso, ms, recordset } from './sql-values.ts';

/** A row of `destination_actions`. */
interface ActionRow {
  /** The order actions were kept in: newest first within one millisecond too. */
  seq: string | number;
  id: string | null;
  destination_id: string;
  endpoint_ref: string | null;
  action: DestinationActionRecord['action'];
  state: DestinationActionRecord['state'];
  reason: string;
  by_name: string;
  by_token_id: string | null;
  at: string | Date;
  auto: boolean;
}

/** A page of the recorded actions: what it asks for. */
export interface ActionPageQuery {
  limit: number;
  /** The `nextCursor` of the page before. */
  cursor?: string;
  /** Only actions on these destinations (a tenant's); undefined: every one (the admin). */
  destinationIds?: readonly string[];
}

/** A page of the recorded actions, newest first, and the cursor of the next (null: none follows). */
export interface ActionPage {
  actions: DestinationActionRecord[];
  nextCursor: string | null;
}

/**
 * What keeps an action once: its id, or for a record written before actions had one, its key and
 * time (the same action read twice has both; two such actions on one key in one millisecond are one).
 */
const actionKey = (r: DestinationActionRecord) => r.id ?? `legacy:${stateKey(r.destinationId, r.endpointRef)}@${r.at}`;

/** The cursor of a page that ended at `row`. */
const cursorOf = (row: ActionRow) => encodeTimeCursor({ at: ms(row.at), keys: [String(row.seq)] });

/** A row as the action record it was written from. */
function recordOf(r: ActionRow): DestinationActionRecord {
  return {
    action: r.action,
    destinationId: r.destination_id,
    ...(r.endpoint_ref !== null && { endpointRef: r.endpoint_ref }),
    ...(r.id !== null && { id: r.id }),
    state: r.state,
    reason: r.reason,
    by: r.by_name,
    ...(r.by_token_id !== null && { byTokenId: r.by_token_id }),
    at: new Date(ms(r.at)).toISOString(),
    ...(r.auto && { auto: true as const }),
  };
}

/**
 * The recorded actions on destinations and endpoints in the log's database
 * (docs/reference/destination-actions.md, "Recorded actions"): filled from `sluice.destination-actions`
 * as the log reads it, one row per action whoever writes it and however often, pruned with the log
 * (retention.ts), listed newest first a page at a time.
 */
export class ActionLog {
  readonly #sql: Sql;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  /**
   * Keeps the actions not kept yet, in the order given (one statement); one whose time the database
   * cannot hold is skipped.
   */
  async record(records: readonly DestinationActionRecord[]): Promise<void> {
    const rows = records
      .filter((r) => {
        const at = Date.parse(r.at);
        return at >= MIN_TIME_MS && at <= MAX_TIME_MS;
      })
      .map((r, n) => ({
        n,
        action_key: storableText(actionKey(r)),
        id: r.id === undefined ? null : storableText(r.id),
        destination_id: storableText(r.destinationId),
        endpoint_ref: r.endpointRef === undefined ? null : storableText(r.endpointRef),
        action: r.action,
        state: r.state,
        reason: storableText(r.reason),
        by_name: storableText(r.by),
        by_token_id: r.byTokenId === undefined ? null : storableText(r.byTokenId),
        at: iso(Date.parse(r.at)),
        auto: r.auto === true,
      }));
    if (rows.length === 0) return;
    await this.#sql.query(
      `insert into destination_actions
         (action_key, id, destination_id, endpoint_ref, action, state, reason, by_name, by_token_id, at, auto)
       select action_key, id, destination_id, endpoint_ref, action, state, reason, by_name, by_token_id, at, auto
       from jsonb_to_recordset($1::text::jsonb) as r(n integer, action_key text, id text, destination_id text,
         endpoint_ref text, action text, state text, reason text, by_name text, by_token_id text,
         at timestamptz, auto boolean)
       order by n
       on conflict (action_key) do nothing`,
      [recordset(rows)],
    );
  }

  /**
   * The newest actions first, after the cursor; a tenant's filtered in the statement, so a page is
   * full whenever more of its actions follow. Undefined for a cursor this log did not give.
   */
  async page(query: ActionPageQuery): Promise<ActionPage | undefined> {
    const after = query.cursor === undefined ? undefined : decodeTimeCursor(query.cursor, 1);
    const seq = after?.keys[0];
    if (query.cursor !== undefined && (seq === undefined || !/^\d{1,18}$/.test(seq))) return undefined;
    const rows = await this.#sql.query<ActionRow>(
      `select seq, id, destination_id, endpoint_ref, action, state, reason, by_name, by_token_id, at, auto
       from destination_actions
       where ($1::text[] is null or destination_id = any ($1::text[]))
         and ($2::timestamptz is null or (at, seq) < ($2::timestamptz, $3::bigint))
       order by at desc, seq desc limit $4`,
      [
        query.destinationIds === undefined ? null : [...query.destinationIds],
        after === undefined ? null : iso(after.at),
        seq ?? null,
        query.limit + 1,
      ],
    );
    const { page, nextCursor } = cutPage(rows, { limit: query.limit, cursorOf });
    return { actions: page.map(recordOf), nextCursor };
  }
}
