/**
 * `npm run bench -- receipts`: year-end statements of 10,000 donors (--donors) on PostgreSQL, as
 * `npm run admin -- receipts annual --year 2026 --send` makes them: every donor's gifts of the
 * year read, each statement drawn as a PDF (half of them in Hebrew, right to left), and each
 * queued for e-mail. Target: ≤ 60 s for 10,000 donors.
 */
import { availableParallelism } from 'node:os';
import { createOrg } from '../apps/server/src/admin/admin-service.ts';
import { openDatabase } from '../apps/server/src/db/database.ts';
import { migrate } from '../apps/server/src/db/migrations.ts';
import { annualStatements } from '../apps/server/src/receipts/receipt-service.ts';
import { benchDeps } from './deps.ts';
import { onCleanup } from './lifecycle.ts';
import { createBenchDatabase, dropBenchDatabase, withDatabase } from './postgres.ts';

export interface ReceiptsOptions {
  pgUrl: URL;
  donors: number;
  giftsPerDonor: number;
  log: (line: string) => void;
}

export interface ReceiptsReport {
  name: 'receipts';
  db: 'postgres';
  donors: number;
  gifts: number;
  hebrewStatements: number;
  seedSeconds: number;
  seconds: number;
  statementsPerSecond: number;
  averageBytes: number;
  queued: number;
  /** Worker threads that drew the PDFs. */
  threads: number;
  cores: number;
  targetSeconds: number;
  meetsTargets: boolean;
  node: string;
  at: string;
}

const TARGET_SECONDS = 60;

export async function runReceipts(opts: ReceiptsOptions): Promise<ReceiptsReport> {
  const name = await createBenchDatabase(opts.pgUrl);
  onCleanup(`drop database ${name}`, () => dropBenchDatabase(opts.pgUrl, name));
  const db = await openDatabase({ url: withDatabase(opts.pgUrl, name), poolSize: 8 });
  onCleanup('close pool', () => db.close());
  await migrate(db);
  const org = await createOrg(db, 'Bench');
  const [{ id: orgId } = { id: '0' }] = await db.query<{ id: string }>(
    'SELECT id FROM orgs WHERE guid = $1',
    [org.orgGuid],
  );
  await db.query(
    `UPDATE orgs SET settings = settings || '{"timezone":"America/New_York","receipts":{"legalName":"Bench Charity Inc.","address":"1 Main Street\\nBrooklyn, NY 11230","taxId":"12-3456789"}}'::jsonb`,
  );
  const t0 = performance.now();
  opts.log(`seeding ${opts.donors} donors with ${opts.giftsPerDonor} gifts each in 2026…`);
  // Odd donors are known by a Hebrew name only: their statements are in Hebrew.
  await db.query(
    `INSERT INTO donors (org_id, account_num, first_name, last_name, first_name_hebrew, last_name_hebrew, emails)
     SELECT $1::bigint, 'D' || (100000 + g),
       CASE WHEN g % 2 = 0 THEN 'First' || g END, CASE WHEN g % 2 = 0 THEN 'Last' || (g % 500) END,
       CASE WHEN g % 2 = 1 THEN 'פרטי' || g END, CASE WHEN g % 2 = 1 THEN 'משפחה' || (g % 500) END,
       jsonb_build_array(jsonb_build_object('emailAddress', 'donor' || g || '@example.org'))
     FROM generate_series(1, $2::int) g`,
    [orgId, opts.donors],
  );
  await db.query(
    `INSERT INTO campaigns (org_id, number, name) SELECT $1::bigint, g, 'Campaign ' || g FROM generate_series(1, 10) g`,
    [orgId],
  );
  await db.query(
    `WITH d AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM donors WHERE org_id = $1::bigint),
          c AS (SELECT array_agg(id ORDER BY id) AS ids FROM campaigns WHERE org_id = $1::bigint)
     INSERT INTO payments (org_id, receipt_num, status, amount_minor, currency, method, payment_date, processed_at,
       created_at, donor_id, campaign_id, gateway_name, brand, last4)
     SELECT $1::bigint, 'R' || (d.n * 100 + k), 'Success', 1800 * k + d.n % 1000,
       CASE WHEN k % 3 = 0 THEN 'ILS' ELSE 'USD' END, 'Credit_Card', t, t, t, d.id, c.ids[1 + (d.n + k) % 10],
       'Sandbox', 'Visa', '4242'
     FROM d, c, generate_series(1, $2::int) k,
       LATERAL (SELECT timestamptz '2026-01-05 15:00:00+00' + ((d.n * 7 + k * 97) % 350) * interval '1 day' AS t) tt`,
    [orgId, opts.giftsPerDonor],
  );
  await db.query('VACUUM ANALYZE');
  const seedSeconds = (performance.now() - t0) / 1000;

  const deps = await benchDeps(db);
  opts.log('generating and queuing the year-end statements…');
  const started = performance.now();
  const summary = await annualStatements(deps, org.orgGuid, 2026, { send: true });
  const seconds = (performance.now() - started) / 1000;
  const r2 = (n: number) => Math.round(n * 100) / 100;
  return {
    name: 'receipts',
    db: 'postgres',
    donors: summary.donors,
    gifts: summary.gifts,
    hebrewStatements: Math.floor(summary.donors / 2) + (summary.donors % 2),
    seedSeconds: r2(seedSeconds),
    seconds: r2(seconds),
    statementsPerSecond: Math.round(summary.donors / seconds),
    averageBytes: Math.round(summary.bytes / Math.max(1, summary.donors)),
    queued: summary.queued,
    threads: summary.threads,
    cores: availableParallelism(),
    targetSeconds: TARGET_SECONDS,
    meetsTargets: seconds <= TARGET_SECONDS && summary.donors === opts.donors,
    node: process.version,
    at: new Date().toISOString(),
  };
}

export function formatReceipts(r: ReceiptsReport): string {
  return [
    `receipts (year-end statements, ${r.db}, Node ${r.node})`,
    `  donors ${r.donors} (${r.hebrewStatements} in Hebrew), gifts ${r.gifts}; seeded in ${r.seedSeconds} s`,
    `  generated and queued in ${r.seconds} s (${r.statementsPerSecond} statements/s, ${r.averageBytes} bytes each; ${r.threads} worker threads on ${r.cores} cores)`,
    `  queued for e-mail: ${r.queued}`,
    `  target ≤ ${r.targetSeconds} s: ${r.meetsTargets ? 'met' : 'MISSED'}`,
  ].join('\n');
}
