/** Throw-away PostgreSQL databases for benchmarks: created fresh, dropped at the end. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Parses a postgres:// URL and refuses anything but a loopback host. */
export function loopbackPgUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`not a URL: ${text}`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new Error(`not a postgres:// URL: ${text}`);
  if (!LOOPBACK.has(url.hostname))
    throw new Error(`benchmarks only use loopback databases, not ${url.hostname}`);
  return url;
}

export function withDatabase(url: URL, database: string): string {
  const copy = new URL(url.href);
  copy.pathname = `/${database}`;
  return copy.href;
}

async function onAdmin<T>(adminUrl: URL, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: adminUrl.href,
    connectionTimeoutMillis: 10_000,
    query_timeout: 60_000,
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** CREATE DATABASE kupah_bench_<random>; returns its name. */
export async function createBenchDatabase(adminUrl: URL): Promise<string> {
  const name = `kupah_bench_${randomBytes(6).toString('hex')}`;
  await onAdmin(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  return name;
}

export async function dropBenchDatabase(adminUrl: URL, name: string): Promise<void> {
  if (!/^kupah_bench_[0-9a-f]{12}$/.test(name)) throw new Error(`refusing to drop ${name}`);
  await onAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

/**
 * One query on its own short-lived connection. `untracked`: its table scans are left out of the
 * statistics counters (track_counts off for the session; needs a superuser, else ignored).
 */
export async function queryOnce<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  params: unknown[] = [],
  opts: { untracked?: boolean } = {},
): Promise<T[]> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    query_timeout: 60_000,
  });
  await client.connect();
  try {
    if (opts.untracked) await client.query('SET track_counts = off').catch(() => {});
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** What the server's connections to one database were doing, sampled from pg_stat_activity. */
export interface BackendActivity {
  samples: number;
  /** Connections inside a statement or a transaction (state other than `idle`): mean and most seen. */
  busyMean: number;
  busyMax: number;
  /** Connections open to the database (busy or idle): most seen. */
  openMax: number;
  /**
   * What the busy connections were doing, as a share of all busy samples (a sampling profile of
   * the database side): `state | wait event | statement`, most frequent first (top 12).
   * `idle in transaction` means the transaction waits for the server's next statement (the
   * statement shown is the one it last ran).
   */
  doing: { what: string; share: number }[];
}

/**
 * Samples, every `everyMs`, how many connections to `database` are busy (running a statement or
 * holding a transaction open). Its own connection is to the admin database, so it is not counted.
 */
export function sampleBackends(adminUrl: URL, database: string, everyMs = 100) {
  const client = new pg.Client({
    connectionString: adminUrl.href,
    connectionTimeoutMillis: 10_000,
    query_timeout: 10_000,
  });
  const busy: number[] = [];
  const doing = new Map<string, number>();
  let openMax = 0;
  let stopped = false;
  const loop = (async () => {
    await client.connect();
    try {
      while (!stopped) {
        const t = performance.now();
        const { rows } = await client.query<{ state: string | null; wait: string | null; q: string }>(
          `SELECT state, wait_event_type || ':' || wait_event AS wait,
                  left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS q
             FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`,
          [database],
        );
        const active = rows.filter((r) => r.state !== 'idle');
        busy.push(active.length);
        openMax = Math.max(openMax, rows.length);
        for (const r of active) {
          const what = `${r.state} | ${r.wait ?? 'CPU'} | ${r.q}`;
          doing.set(what, (doing.get(what) ?? 0) + 1);
        }
        await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (performance.now() - t))));
      }
    } finally {
      await client.end();
    }
  })();
  // A failure (e.g. PostgreSQL gone) only means no figures: it is reported as null by stop().
  loop.catch(() => {});
  return {
    async stop(): Promise<BackendActivity | null> {
      stopped = true;
      try {
        await loop;
      } catch {
        return null;
      }
      if (busy.length === 0) return null;
      const all = [...doing.values()].reduce((a, b) => a + b, 0);
      return {
        samples: busy.length,
        busyMean: Math.round((busy.reduce((a, b) => a + b, 0) / busy.length) * 10) / 10,
        busyMax: Math.max(...busy),
        openMax,
        doing: [...doing]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 12)
          .map(([what, n]) => ({ what, share: Math.round((n / all) * 1000) / 1000 })),
      };
    },
  };
}

/** Counters of one database from pg_stat_database and pg_stat_user_tables. */
export interface DbCounters {
  database: Record<string, number>;
  tables: Record<string, Record<string, number>>;
}

const DB_COUNTERS = ['xact_commit', 'xact_rollback', 'tup_fetched', 'tup_inserted', 'tup_updated'];
const TABLE_COUNTERS = [
  'seq_scan',
  'seq_tup_read',
  'idx_scan',
  'idx_tup_fetch',
  'n_tup_ins',
  'n_tup_upd',
  'n_tup_hot_upd',
];

/**
 * Reads the statistics counters of the database at `url` (PostgreSQL 15 publishes a backend's
 * counts at most once a second and when it exits: read after the server has stopped for exact figures).
 */
export async function dbCounters(url: string): Promise<DbCounters> {
  const [db] = await queryOnce<Record<string, string>>(
    url,
    `SELECT ${DB_COUNTERS.join(', ')} FROM pg_stat_database WHERE datname = current_database()`,
  );
  const rows = await queryOnce<Record<string, string>>(
    url,
    `SELECT relname, ${TABLE_COUNTERS.map((c) => `coalesce(${c}, 0) AS ${c}`).join(', ')} FROM pg_stat_user_tables`,
  );
  const num = (row: Record<string, string> | undefined, keys: string[]) =>
    Object.fromEntries(keys.map((k) => [k, Number(row?.[k] ?? 0)]));
  return {
    database: num(db, DB_COUNTERS),
    tables: Object.fromEntries(rows.map((r) => [r.relname!, num(r, TABLE_COUNTERS)])),
  };
}

/** (after − before) ÷ per, rounded; tables whose counters did not move are left out. */
export function countersPer(before: DbCounters, after: DbCounters, per: number): DbCounters {
  const div = (a: Record<string, number>, b: Record<string, number> | undefined) =>
    Object.fromEntries(
      Object.entries(a).map(([k, v]) => [k, Math.round(((v - (b?.[k] ?? 0)) / per) * 100) / 100]),
    );
  const tables: DbCounters['tables'] = {};
  for (const [name, counts] of Object.entries(after.tables)) {
    const d = div(counts, before.tables[name]);
    if (Object.values(d).some((v) => v !== 0)) tables[name] = d;
  }
  return { database: div(after.database, before.database), tables };
}
