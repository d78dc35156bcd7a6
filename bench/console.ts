/**
 * `npm run bench -- console [--payments 1000000] [--repeats 5] [--dense]`: the console's first-screen
 * JavaScript (gzipped, target ≤ 300 KB), then its Today
 * screen and payments search on PostgreSQL over 1,000,000 payments of one organisation (the read
 * API's seed, bench/reports.ts: a year of 2025, another organisation's 200,000 beside them), the
 * clock set to 2025-12-31 16:00 New York so today, 7 and 30 days fall in the data. `--dense` puts
 * the whole million in the last 30 days instead (the worst case for the 30-day view).
 *
 * The data routes are mounted as `consoleApi()` mounts them, behind a middleware that sets the
 * signed-in user (the session lookup, one indexed query, is not timed). Target: ≤ 300 ms.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Hono } from 'hono';
import { firstScreenSize } from '../apps/console/scripts/first-screen-size.mjs';
import { createOrg } from '../apps/server/src/admin/admin-service.ts';
import { consoleDataRoutes } from '../apps/server/src/console/data-routes.ts';
import type { ConsoleEnv } from '../apps/server/src/console/env.ts';
import { openDatabase } from '../apps/server/src/db/database.ts';
import { migrate } from '../apps/server/src/db/migrations.ts';
import { benchDeps } from './deps.ts';
import { onCleanup, runCleanups } from './lifecycle.ts';
import {
  createBenchDatabase,
  DEFAULT_PG_URL,
  dropBenchDatabase,
  loopbackPgUrl,
  withDatabase,
} from './postgres.ts';
import { seed } from './reports.ts';

const TARGET_MS = 300;
const JS_TARGET_KB = 300;

/** The console's first screen (shell, Today, chart): gzipped JavaScript of the production build. */
function firstScreenJavaScript(): void {
  const root = fileURLToPath(new URL('../apps/console/', import.meta.url));
  const build = spawnSync('npx', ['vite', 'build', '--logLevel', 'warn'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production' },
  });
  if (build.status !== 0) throw new Error('the console build failed');
  const size = firstScreenSize(`${root}dist`);
  const kb = Math.round((size.total / 1024) * 10) / 10;
  console.log(
    `first screen JavaScript: ${kb} KB gzipped (${size.files.length} files) — target ≤ ${JS_TARGET_KB} KB: ${kb <= JS_TARGET_KB ? 'met' : 'MISSED'}`,
  );
}

async function main() {
  firstScreenJavaScript();
  const { values } = parseArgs({
    options: {
      payments: { type: 'string', default: '1000000' },
      repeats: { type: 'string', default: '5' },
      dense: { type: 'boolean', default: false },
      pg: { type: 'string', default: process.env.BENCH_PG_URL ?? DEFAULT_PG_URL },
      /** Keep the seeded database (its name is printed) / time again on one kept before. */
      keep: { type: 'boolean', default: false },
      reuse: { type: 'string' },
    },
  });
  const n = Number(values.payments);
  const repeats = Number(values.repeats);
  const pgUrl = loopbackPgUrl(values.pg);
  const reuse = values.reuse;
  if (reuse !== undefined && !/^kupah_bench_[0-9a-f]{12}$/.test(reuse))
    throw new Error(`not a bench database: ${reuse}`);
  const name = reuse ?? (await createBenchDatabase(pgUrl));
  if (!values.keep && reuse === undefined)
    onCleanup(`drop database ${name}`, () => dropBenchDatabase(pgUrl, name));
  else console.log(`database ${name} is kept (drop it with: DROP DATABASE ${name})`);
  const db = await openDatabase({ url: withDatabase(pgUrl, name), poolSize: 8 });
  onCleanup('close pool', () => db.close());
  await migrate(db);
  const idOf = async (guid: string) =>
    Number((await db.query<{ id: string }>('SELECT id FROM orgs WHERE guid = $1', [guid]))[0]!.id);
  let org: { orgGuid: string };
  if (reuse === undefined) {
    org = await createOrg(db, 'Bench');
    const other = await createOrg(db, 'Other');
    const orgId = await idOf(org.orgGuid);
    const t0 = performance.now();
    console.log(`seeding ${n} payments (and ${n / 5} of another organisation)…`);
    await seed(db, orgId, n);
    await seed(db, await idOf(other.orgGuid), Math.round(n / 5));
    if (values.dense) {
      // The whole year squeezed into 2025-12-02 … 2025-12-31 (New York), local_day following.
      await db.query(
        `UPDATE payments SET created_at = timestamptz '2025-12-02 05:00:00+00' + (created_at - timestamptz '2025-01-01 05:00:00+00') / 365 * 30,
           local_day = NULL WHERE org_id = $1`,
        [orgId],
      );
      await db.query(
        `UPDATE payments SET local_day = (created_at AT TIME ZONE 'America/New_York')::date WHERE org_id = $1`,
        [orgId],
      );
      await db.query(
        'UPDATE payment_reasons pr SET created_at = p.created_at FROM payments p WHERE p.id = pr.payment_id AND p.org_id = $1',
        [orgId],
      );
    }
    console.log('VACUUM ANALYZE…');
    await db.query('VACUUM ANALYZE');
    console.log(`seeded in ${Math.round((performance.now() - t0) / 1000)} s`);
  } else {
    org = (await db.query<{ guid: string }>("SELECT guid FROM orgs WHERE name = 'Bench'")).map((r) => ({
      orgGuid: r.guid,
    }))[0]!;
  }
  const orgId = await idOf(org.orgGuid);

  const deps = { ...(await benchDeps(db)), now: () => new Date('2025-12-31T21:00:00.000Z') };
  const app = new Hono<ConsoleEnv>();
  app.use(async (c, next) => {
    c.set('deps', deps);
    c.set('consoleUser', {
      userId: 1,
      email: 'viewer@example.org',
      name: null,
      role: 'viewer',
      orgId,
      orgGuid: org.orgGuid,
      orgName: 'Bench',
      sessionId: 'bench',
    });
    await next();
  });
  app.route('/console/api', consoleDataRoutes());

  const results: { label: string; median: number; max: number; met: boolean }[] = [];
  const time = async (label: string, path: string) => {
    const ms: number[] = [];
    for (let i = 0; i < repeats + 1; i++) {
      const start = performance.now();
      const res = await app.request(`/console/api${path}`);
      await res.text();
      const took = performance.now() - start;
      if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
      if (i > 0) ms.push(took);
    }
    ms.sort((a, b) => a - b);
    const median = Math.round(ms[Math.floor(ms.length / 2)]! * 10) / 10;
    const max = Math.round(ms.at(-1)! * 10) / 10;
    results.push({ label, median, max, met: max <= TARGET_MS });
    console.log(
      `${label.padEnd(44)} median ${String(median).padStart(7)} ms  max ${String(max).padStart(7)} ms  ${max <= TARGET_MS ? 'met' : 'MISSED'}`,
    );
  };
  await time('dashboard today', '/dashboard?range=today');
  await time('dashboard 7 days', '/dashboard?range=7d');
  await time('dashboard 30 days', '/dashboard?range=30d');
  await time('payments, first page of 50', '/payments?limit=50');
  await time(
    'payments, Declined USD in December',
    '/payments?status=Declined&currency=USD&from=2025-12-01&limit=50',
  );
  await time('payments, by campaign 7', '/payments?campaign=7&limit=50');
  await time('payments, name search "Last42"', '/payments?q=Last42&limit=50');
  await time('payments, Hebrew name search', `/payments?q=${encodeURIComponent('משפחה42')}&limit=50`);
  await time('payments, rare name "Last4242"', '/payments?q=Last4242&limit=50');
  await time('payments, no match', '/payments?q=nobody-at-all&limit=50');
  await time('payments, e-mail', '/payments?q=donor4242@example.org&limit=50');
  await time('payments, receipt number', `/payments?q=B${orgId}-999999&limit=50`);
  console.log(JSON.stringify({ payments: n, dense: values.dense, results }));
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => runCleanups());
