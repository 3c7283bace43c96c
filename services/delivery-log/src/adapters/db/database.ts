import { PGlite } from '@electric-sql/pglite';
import postgres from 'postgres';

/**
 * The one SQL interface the delivery log uses, over either database (docs/delivery-log.md,
 * "Database"): PostgreSQL text with `$1` parameters, the same schema and statements for both.
 */
export interface Sql {
  query<T extends object = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Runs `work` in one transaction; statements inside go through the `Sql` it is given. */
  transaction<R>(work: (tx: Sql) => Promise<R>): Promise<R>;
  close(): Promise<void>;
  /** `embedded` (PGlite) or `postgres`. */
  readonly kind: 'embedded' | 'postgres';
  /** False for the embedded database in memory: nothing of it outlives the process (see `migrate`). */
  readonly durable: boolean;
}

export interface DatabaseSettings {
  /** A PostgreSQL URL; without it the embedded database is used. */
  url?: string;
  /** Data directory of the embedded database; without it, memory. */
  dataDir?: string;
}

function pgliteSql(
  db: PGlite | Parameters<Parameters<PGlite['transaction']>[0]>[0],
  durable: boolean,
): Omit<Sql, 'close' | 'kind' | 'durable'> {
  return {
    query: async <T extends object>(text: string, params: unknown[] = []) => (await db.query<T>(text, params)).rows,
    transaction: (work) => {
      if (!('transaction' in db)) throw new Error('nested transactions are not used');
      return db.transaction((tx) =>
        work({ ...pgliteSql(tx, durable), close: async () => {}, kind: 'embedded', durable }),
      );
    },
  };
}

async function openEmbedded(dataDir: string | undefined): Promise<Sql> {
  const db = await PGlite.create(dataDir ?? 'memory://');
  const durable = dataDir !== undefined;
  return { ...pgliteSql(db, durable), kind: 'embedded', durable, close: () => db.close() };
}

type PostgresClient = ReturnType<typeof postgres>;

function postgresSql(sql: PostgresClient | postgres.TransactionSql): Omit<Sql, 'close' | 'kind' | 'durable'> {
  return {
    query: async <T extends object>(text: string, params: unknown[] = []) =>
      (await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[])) as unknown as T[],
    transaction: async <R>(work: (tx: Sql) => Promise<R>) => {
      if (!('begin' in sql)) throw new Error('nested transactions are not used');
      return (await sql.begin((tx) =>
        work({ ...postgresSql(tx), close: async () => {}, kind: 'postgres', durable: true }),
      )) as R;
    },
  };
}

async function openPostgres(url: string): Promise<Sql> {
  const sql = postgres(url, { max: 8, onnotice: () => {}, connect_timeout: 10 });
  await sql`select 1`;
  return { ...postgresSql(sql), kind: 'postgres', durable: true, close: () => sql.end({ timeout: 5 }) };
}

/** Opens PostgreSQL when a URL is given, else the embedded database. */
export function openDatabase(settings: DatabaseSettings): Promise<Sql> {
  return settings.url !== undefined ? openPostgres(settings.url) : openEmbedded(settings.dataDir);
}
