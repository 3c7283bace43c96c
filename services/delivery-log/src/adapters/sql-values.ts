/** Values as the log's SQL statements write and read them (both databases). */

/** Destination id of the row that holds a message-level rejection (no destination was reached). */
export const NO_DESTINATION = '';

/** A row as a driver returns it. */
export type Row = Record<string, unknown>;

/** Epoch ms as the timestamp text the statements take. */
export const iso = (ms: number) => new Date(ms).toISOString();

/** A timestamp column (a Date from one driver, a text from the other) as epoch ms. */
export const ms = (v: unknown) => (v instanceof Date ? v.getTime() : Date.parse(String(v)));
