/**
 * The durable-write limit of a database through the server's own driver: N concurrent clients,
 * each committing bare single-row autocommit INSERTs into `bench_insert` for a fixed time.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { type CpuSplit, cpuSnapshot, cpuSplit } from './cpu.ts';
import { withTimeout } from './lifecycle.ts';

export interface InsertResult {
  clients: number;
  seconds: number;
  commits: number;
  commitsPerSecond: number;
  /** Rows in bench_insert afterwards (warm-up + measured); must equal every acknowledged commit. */
  rowsInTable: number;
  rowsExpected: number;
  /** CPU during the measured part; `loadGenerator` is this process (the driver and, for PGlite, the database). */
  cpu: CpuSplit | null;
}

const CREATE = 'CREATE TABLE IF NOT EXISTS bench_insert (id bigserial PRIMARY KEY, v text)';
const INSERT = 'INSERT INTO bench_insert (v) VALUES ($1)';
const COUNT = 'SELECT count(*)::int AS n FROM bench_insert';

/** Run `clients` loops of `insert` for `seconds`; returns how many committed and the time taken. */
async function drive(
  clients: number,
  seconds: number,
  insert: (v: string) => Promise<unknown>,
): Promise<{ commits: number; seconds: number }> {
  let commits = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  const loop = async (c: number) => {
    let i = 0;
    while (performance.now() < end) {
      await insert(`c${c}-${i++}`);
      commits++;
    }
  };
  await withTimeout(
    Promise.all(Array.from({ length: clients }, (_, c) => loop(c))),
    seconds * 1000 + 60_000,
    'insert benchmark',
  );
  return { commits, seconds: (performance.now() - started) / 1000 };
}

async function measure(
  clients: number,
  seconds: number,
  insert: (v: string) => Promise<unknown>,
  count: () => Promise<number>,
  database?: string,
): Promise<InsertResult> {
  const warm = await drive(clients, Math.min(1, seconds / 5), insert);
  const cpuBefore = cpuSnapshot(undefined, database);
  const run = await drive(clients, seconds, insert);
  const cpu = cpuSplit(cpuBefore, cpuSnapshot(undefined, database), run.commits);
  return {
    clients,
    seconds: run.seconds,
    commits: run.commits,
    commitsPerSecond: run.commits / run.seconds,
    rowsInTable: await count(),
    rowsExpected: warm.commits + run.commits,
    cpu,
  };
}

/** PostgreSQL: a `pg` Pool of `clients` connections to `url`, autocommit INSERTs. */
export async function measurePgInserts(url: string, clients: number, seconds: number): Promise<InsertResult> {
  const pool = new pg.Pool({ connectionString: url, max: clients, connectionTimeoutMillis: 10_000 });
  pool.on('error', () => {});
  try {
    await pool.query(CREATE);
    // Open every connection before timing.
    const held = await Promise.all(Array.from({ length: clients }, () => pool.connect()));
    for (const c of held) c.release();
    return await measure(
      clients,
      seconds,
      (v) => pool.query(INSERT, [v]),
      async () => Number((await pool.query<{ n: number }>(COUNT)).rows[0]!.n),
      decodeURIComponent(new URL(url).pathname.slice(1)),
    );
  } finally {
    await pool.end();
  }
}

/** PGlite: its own instance on `dataDir` (one connection: the clients queue on it, as the server's do). */
export async function measurePgliteInserts(
  dataDir: string,
  clients: number,
  seconds: number,
): Promise<InsertResult> {
  const db = new PGlite(dataDir);
  await withTimeout(db.waitReady, 60_000, 'opening PGlite');
  try {
    await db.query(CREATE);
    return await measure(
      clients,
      seconds,
      (v) => db.query(INSERT, [v]),
      async () => Number((await db.query<{ n: number }>(COUNT)).rows[0]!.n),
    );
  } finally {
    await db.close();
  }
}
