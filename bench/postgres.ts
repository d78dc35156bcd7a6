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

/** One query on its own short-lived connection. */
export async function queryOnce<T extends pg.QueryResultRow>(
  url: string,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: 10_000,
    query_timeout: 60_000,
  });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}
