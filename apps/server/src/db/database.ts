/**
 * Connection factory: PostgreSQL (driver `pg`) when a URL is given, otherwise embedded PGlite.
 * Both speak the same SQL with `$1` parameters; only this folder and `repo.ts` files use it.
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

export interface Sql {
  query<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
}

export interface Db extends Sql {
  readonly kind: 'pglite' | 'postgres';
  /** Run `fn` in one transaction; it commits when `fn` resolves and rolls back when it throws. */
  transaction<T>(fn: (tx: Sql) => Promise<T>): Promise<T>;
  /**
   * Call `onNotify` for each NOTIFY on `channel` (delivered on commit). Best effort: a lost
   * connection may drop notifications, so listeners also poll. Returns the unsubscribe function.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface DbOptions {
  /** `postgres://…` for PostgreSQL; undefined for embedded PGlite. */
  url?: string | undefined;
  /** PGlite data directory; undefined = in memory. */
  dataDir?: string | undefined;
  /** Schema to create and use (tests isolate by schema). */
  schema?: string | undefined;
  /** Maximum pool size for PostgreSQL. */
  poolSize?: number | undefined;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export async function openDatabase(opts: DbOptions): Promise<Db> {
  if (opts.schema !== undefined && !SCHEMA_NAME.test(opts.schema))
    throw new Error(`bad schema name ${opts.schema}`);
  return opts.url ? openPostgres(opts) : openPglite(opts);
}

async function openPglite(opts: DbOptions): Promise<Db> {
  if (opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
  const pglite = opts.dataDir ? new PGlite(opts.dataDir) : new PGlite();
  await pglite.waitReady;
  if (opts.schema)
    await pglite.exec(
      `CREATE SCHEMA IF NOT EXISTS ${opts.schema}; SET search_path TO ${opts.schema}, public`,
    );
  // PGlite is a single connection: its transactions are serialised by PGlite itself.
  return {
    kind: 'pglite',
    async query<T>(text: string, params?: readonly unknown[]) {
      return (await pglite.query<T>(text, params as unknown[] | undefined)).rows;
    },
    async transaction<T>(fn: (tx: Sql) => Promise<T>) {
      return pglite.transaction((tx) =>
        fn({
          query: async <R>(text: string, params?: readonly unknown[]) =>
            (await tx.query<R>(text, params as unknown[] | undefined)).rows,
        }),
      );
    },
    async listen(channel, onNotify) {
      return pglite.listen(channel, () => onNotify());
    },
    async close() {
      await pglite.close();
    },
  };
}

/**
 * Data statements are sent as named prepared statements: each connection parses and plans one
 * once, instead of on every call (a measurable share of a charge's database CPU).
 */
const PREPARABLE = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;
const statementNames = new Map<string, string>();
function pgQuery(text: string, params: readonly unknown[] | undefined): pg.QueryConfig {
  const values = params as unknown[] | undefined;
  if (!PREPARABLE.test(text)) return { text, values };
  let name = statementNames.get(text);
  if (!name) {
    name = `k${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

async function openPostgres(opts: DbOptions): Promise<Db> {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.poolSize ?? 20,
    options: opts.schema ? `-c search_path=${opts.schema},public` : undefined,
  });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  if (opts.schema) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${opts.schema}`);
  return {
    kind: 'postgres',
    async query<T>(text: string, params?: readonly unknown[]) {
      return (await pool.query(pgQuery(text, params))).rows as T[];
    },
    async transaction<T>(fn: (tx: Sql) => Promise<T>) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({
          query: async <R>(text: string, params?: readonly unknown[]) =>
            (await client.query(pgQuery(text, params))).rows as R[],
        });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async listen(channel, onNotify) {
      let client: pg.Client | null = null;
      let stopped = false;
      const connect = async () => {
        if (stopped) return;
        const c = new pg.Client({ connectionString: opts.url });
        c.on('notification', () => onNotify());
        c.on('error', () => {
          c.end().catch(() => {});
          if (client === c) client = null;
          if (!stopped) setTimeout(() => void connect().catch(() => {}), 1000).unref();
        });
        await c.connect();
        await c.query(`LISTEN ${channel}`);
        client = c;
      };
      await connect();
      return async () => {
        stopped = true;
        await client?.end().catch(() => {});
      };
    },
    async close() {
      await pool.end();
    },
  };
}
