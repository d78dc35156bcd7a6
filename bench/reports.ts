/**
 * `npm run bench -- reports`: a year of 1,000,000 payments of one organisation on PostgreSQL
 * (another organisation's 200,000 beside them), then the read API over real loopback HTTP:
 * totals for the whole year by every groupBy (target ≤ 500 ms each), the first page of payments,
 * a filtered page, a page deep in the cursor, a donor search and one donor with history.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createOrg } from '../apps/server/src/admin/admin-service.ts';
import { createApp } from '../apps/server/src/app.ts';
import { openDatabase } from '../apps/server/src/db/database.ts';
import { migrate } from '../apps/server/src/db/migrations.ts';
import { benchDeps } from './deps.ts';
import { onCleanup } from './lifecycle.ts';
import { createBenchDatabase, dropBenchDatabase, withDatabase } from './postgres.ts';

export interface ReportsOptions {
  pgUrl: URL;
  payments: number;
  repeats: number;
  log: (line: string) => void;
}

interface Timing {
  name: string;
  path: string;
  medianMs: number;
  maxMs: number;
  rows: number;
  target: number | null;
  met: boolean;
}

export interface ReportsReport {
  name: 'reports';
  db: 'postgres';
  payments: number;
  otherOrgPayments: number;
  seedSeconds: number;
  repeats: number;
  timings: Timing[];
  meetsTargets: boolean;
  node: string;
  at: string;
}

const TOTALS_TARGET_MS = 500;
const GROUPS = ['day', 'device', 'collector', 'campaign', 'reason', 'method', 'currency'] as const;

/** Seed `n` payments spread over the year 2025 (New York days), with parties, splits and statuses. */
export async function seed(
  db: Awaited<ReturnType<typeof openDatabase>>,
  orgId: number,
  n: number,
): Promise<void> {
  await db.query(
    `INSERT INTO sources (org_id, guid_hash, masked, name, kind, sandbox)
     SELECT $1::bigint, md5($1::text || ':src:' || g), '****' || g, 'Kiosk ' || g, 'device', false FROM generate_series(1, 20) g`,
    [orgId],
  );
  await db.query(
    `INSERT INTO devices (device_id, org_id, name, sandbox, source_id, paired_at)
     SELECT 'dev_' || $1::text || '_' || s.id, $1::bigint, s.name, false, s.id, now() FROM sources s WHERE s.org_id = $1::bigint`,
    [orgId],
  );
  await db.query(
    `INSERT INTO collectors (org_id, account_num, first_name, last_name)
     SELECT $1::bigint, 'C' || ($1::bigint * 10000 + g), 'Collector', 'No ' || g FROM generate_series(1, 50) g`,
    [orgId],
  );
  await db.query(
    `INSERT INTO campaigns (org_id, number, name) SELECT $1::bigint, g, 'Campaign ' || g FROM generate_series(1, 20) g`,
    [orgId],
  );
  await db.query(
    `INSERT INTO reasons (org_id, number, name) SELECT $1::bigint, g, 'Reason ' || g FROM generate_series(1, 30) g`,
    [orgId],
  );
  await db.query(
    `INSERT INTO donors (org_id, account_num, first_name, last_name, first_name_hebrew, last_name_hebrew, phones, emails)
     SELECT $1::bigint, 'D' || ($1::bigint * 1000000 + g), 'First' || g, 'Last' || (g % 5000), 'פרטי' || g, 'משפחה' || (g % 5000),
       jsonb_build_array(jsonb_build_object('phoneNumber', '718-555-' || lpad((g % 10000)::text, 4, '0'))),
       jsonb_build_array(jsonb_build_object('emailAddress', 'donor' || g || '@example.org'))
     FROM generate_series(1, 50000) g`,
    [orgId],
  );
  // In batches of 100,000 so no one statement holds a year of rows in memory.
  const batch = 100_000;
  for (let start = 0; start < n; start += batch) {
    const count = Math.min(batch, n - start);
    await db.query(
      `WITH ids AS (
         SELECT (SELECT array_agg(id ORDER BY id) FROM sources WHERE org_id = $1::bigint) AS src,
                (SELECT array_agg(id ORDER BY id) FROM collectors WHERE org_id = $1::bigint) AS col,
                (SELECT array_agg(id ORDER BY id) FROM campaigns WHERE org_id = $1::bigint) AS camp,
                (SELECT min(id) FROM donors WHERE org_id = $1::bigint) AS donor0
       )
       INSERT INTO payments (org_id, receipt_num, status, amount_minor, currency, method, payment_date, processed_at,
         created_at, donor_id, campaign_id, collector_id, source_id, gateway_name, gateway_ref, brand, last4, voided_at)
       SELECT $1::bigint, 'B' || $1::text || '-' || g,
         CASE WHEN g % 100 < 90 THEN 'Success' WHEN g % 100 < 94 THEN 'Voided' WHEN g % 100 < 99 THEN 'Declined' ELSE 'Error' END,
         100 + (g::bigint * 7919) % 50000,
         CASE WHEN g % 20 < 16 THEN 'USD' WHEN g % 20 < 19 THEN 'ILS' ELSE 'EUR' END,
         CASE WHEN g % 10 < 8 THEN 'Credit_Card' WHEN g % 10 < 9 THEN 'ACH' ELSE 'DonorsFund' END,
         t, t, t,
         CASE WHEN g % 4 = 0 THEN NULL ELSE ids.donor0 + (g % 50000) END,
         CASE WHEN g % 3 = 0 THEN NULL ELSE ids.camp[1 + g % 20] END,
         CASE WHEN g % 5 = 0 THEN ids.col[1 + g % 50] END,
         CASE WHEN g % 2 = 0 THEN ids.src[1 + g % 20] END,
         'sola', 'ref' || g, 'Visa', lpad((g % 10000)::text, 4, '0'),
         CASE WHEN g % 100 BETWEEN 90 AND 93 THEN t + interval '1 hour' END
       FROM ids, generate_series($2::int + 1, $2::int + $3::int) g,
         LATERAL (SELECT timestamptz '2025-01-01 05:00:00+00' + (g::float8 / $4::float8) * interval '365 days' AS t) tt`,
      [orgId, start, count, n],
    );
  }
  // A third of the payments split over one or two reasons.
  await db.query(
    `INSERT INTO payment_reasons (payment_id, reason_id, amount_minor)
     SELECT p.id, r.id, CASE WHEN p.id % 2 = 0 THEN p.amount_minor ELSE p.amount_minor / 2 END
     FROM payments p JOIN reasons r ON r.org_id = p.org_id AND r.number = 1 + p.id % 30
     WHERE p.org_id = $1 AND p.id % 3 = 0`,
    [orgId],
  );
  await db.query(
    `INSERT INTO payment_reasons (payment_id, reason_id, amount_minor)
     SELECT p.id, r.id, p.amount_minor - p.amount_minor / 2
     FROM payments p JOIN reasons r ON r.org_id = p.org_id AND r.number = 1 + (p.id + 7) % 30
     WHERE p.org_id = $1 AND p.id % 3 = 0 AND p.id % 2 = 1`,
    [orgId],
  );
  await db.query(
    'UPDATE payments SET reason_count = CASE WHEN id % 2 = 0 THEN 1 ELSE 2 END WHERE org_id = $1 AND id % 3 = 0',
    [orgId],
  );
}

export async function runReports(opts: ReportsOptions): Promise<ReportsReport> {
  const name = await createBenchDatabase(opts.pgUrl);
  onCleanup(`drop database ${name}`, () => dropBenchDatabase(opts.pgUrl, name));
  const db = await openDatabase({ url: withDatabase(opts.pgUrl, name), poolSize: 8 });
  onCleanup('close pool', () => db.close());
  await migrate(db);
  const org = await createOrg(db, 'Bench');
  const other = await createOrg(db, 'Other');
  const idOf = async (guid: string) =>
    Number((await db.query<{ id: string }>('SELECT id FROM orgs WHERE guid = $1', [guid]))[0]!.id);
  const orgId = await idOf(org.orgGuid);
  await db.query(
    `UPDATE orgs SET settings = settings || '{"timezone":"America/New_York","rateLimit":{"perSecond":100000,"burst":1000000}}'::jsonb`,
  );
  const t0 = performance.now();
  opts.log(`seeding ${opts.payments} payments of one organisation (and ${opts.payments / 5} of another)…`);
  await seed(db, orgId, opts.payments);
  await seed(db, await idOf(other.orgGuid), Math.round(opts.payments / 5));
  opts.log('VACUUM ANALYZE…');
  await db.query('VACUUM ANALYZE');
  const seedSeconds = (performance.now() - t0) / 1000;

  const deps = await benchDeps(db);
  const app = createApp(deps, {});
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((r) => server.once('listening', () => r()));
  onCleanup('close server', () => new Promise<void>((r) => server.close(() => r())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const time = async (label: string, path: string, target: number | null, rowsOf: (b: never) => number) => {
    const ms: number[] = [];
    let rows = 0;
    for (let i = 0; i < opts.repeats + 1; i++) {
      const start = performance.now();
      const res = await fetch(`${base}${path}`, { headers: { apikey: org.apiKey } });
      const body = (await res.json()) as never;
      const took = performance.now() - start;
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
      rows = rowsOf(body);
      if (i > 0) ms.push(took); // the first is a warm-up
    }
    ms.sort((a, b) => a - b);
    const medianMs = Math.round(ms[Math.floor(ms.length / 2)]! * 10) / 10;
    const maxMs = Math.round(ms.at(-1)! * 10) / 10;
    const t: Timing = {
      name: label,
      path,
      medianMs,
      maxMs,
      rows,
      target,
      met: target === null || maxMs <= target,
    };
    opts.log(`${label}: median ${medianMs} ms, max ${maxMs} ms (${rows} rows)`);
    return t;
  };

  const timings: Timing[] = [];
  for (const g of GROUPS) {
    timings.push(
      await time(
        `totals by ${g}, whole year`,
        `/v1/External/Reports/Totals?from=2025-01-01&to=2025-12-31&groupBy=${g}`,
        TOTALS_TARGET_MS,
        (b: { groups: unknown[] }) => b.groups.length,
      ),
    );
  }
  const pageRows = (b: { payments: unknown[] }) => b.payments.length;
  timings.push(await time('payments, first page of 100', '/v1/External/Payments', null, pageRows));
  timings.push(
    await time(
      'payments, Declined in March, USD, page of 100',
      '/v1/External/Payments?status=Declined&currency=USD&from=2025-03-01&to=2025-03-31',
      null,
      pageRows,
    ),
  );
  timings.push(
    await time(
      'payments, text search "Last42", page of 100',
      '/v1/External/Payments?q=Last42',
      null,
      pageRows,
    ),
  );
  // A page deep in the list: follow the cursor 50 pages of 500 first.
  let cursor = '';
  for (let i = 0; i < 50; i++) {
    const res = await fetch(`${base}/v1/External/Payments?limit=500${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { apikey: org.apiKey },
    });
    cursor = ((await res.json()) as { nextCursor: string }).nextCursor;
  }
  timings.push(
    await time(
      'payments, page 51 of 500 by cursor',
      `/v1/External/Payments?limit=500&cursor=${cursor}`,
      null,
      pageRows,
    ),
  );
  timings.push(
    await time(
      'donor search "555-0042" (phone)',
      '/v1/External/Donors?search=555-0042',
      null,
      (b: { donors: unknown[] }) => b.donors.length,
    ),
  );
  timings.push(
    await time(
      'donor search "משפחה42" (Hebrew name)',
      `/v1/External/Donors?search=${encodeURIComponent('משפחה42')}`,
      null,
      (b: { donors: unknown[] }) => b.donors.length,
    ),
  );
  const donor = (
    await db.query<{ account_num: string }>(
      'SELECT d.account_num FROM donors d JOIN payments p ON p.donor_id = d.id WHERE d.org_id = $1 LIMIT 1',
      [orgId],
    )
  )[0]!.account_num;
  timings.push(
    await time(
      'one donor with history',
      `/v1/External/Donors/${donor}`,
      null,
      (b: { payments: unknown[] }) => b.payments.length,
    ),
  );
  const [count] = await db.query<{ n: string }>('SELECT count(*) AS n FROM payments WHERE org_id = $1', [
    orgId,
  ]);
  return {
    name: 'reports',
    db: 'postgres',
    payments: Number(count!.n),
    otherOrgPayments: Math.round(opts.payments / 5),
    seedSeconds: Math.round(seedSeconds),
    repeats: opts.repeats,
    timings,
    meetsTargets: timings.every((t) => t.met),
    node: process.version,
    at: new Date().toISOString(),
  };
}

export function formatReports(r: ReportsReport): string {
  const lines = [
    `reports on PostgreSQL: ${r.payments.toLocaleString('en-US')} payments in a year (+${r.otherOrgPayments.toLocaleString('en-US')} of another organisation), seeded in ${r.seedSeconds} s; ${r.repeats} timed runs each`,
    ...r.timings.map(
      (t) =>
        `  ${t.name.padEnd(48)} median ${String(t.medianMs).padStart(7)} ms  max ${String(t.maxMs).padStart(7)} ms  ${String(t.rows).padStart(4)} rows${t.target === null ? '' : `  target ≤ ${t.target} ms: ${t.met ? 'met' : 'MISSED'}`}`,
    ),
  ];
  return lines.join('\n');
}
