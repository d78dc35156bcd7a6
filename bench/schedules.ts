/**
 * `npm run bench -- schedules`: (1) the calendar engine computes a year of instalments for
 * 100,000 mixed schedules (target ≤ 5 s); (2) the recurring scheduler charges 10,000 due
 * instalments on PostgreSQL through the sandbox gateway (target ≤ 30 s), checked for exactly once.
 */
import { createOrg } from '../apps/server/src/admin/admin-service.ts';
import { openDatabase } from '../apps/server/src/db/database.ts';
import { migrate } from '../apps/server/src/db/migrations.ts';
import { recurringScheduler } from '../apps/server/src/schedules/scheduler.ts';
import { benchmarkEngineDetailed } from '../packages/schedule/src/bench-engine.ts';
import { benchDeps } from './deps.ts';
import { onCleanup } from './lifecycle.ts';
import { createBenchDatabase, dropBenchDatabase, withDatabase } from './postgres.ts';

export interface SchedulesOptions {
  pgUrl: URL;
  engineSchedules: number;
  instalments: number;
  concurrency: number;
}

export interface SchedulesReport {
  name: 'schedules';
  engine: { schedules: number; instalments: number; seconds: number; target: number; met: boolean };
  scheduler: {
    db: 'postgres';
    instalments: number;
    concurrency: number;
    seconds: number;
    perSecond: number;
    successes: number;
    duplicates: number;
    target: number;
    met: boolean;
  };
  meetsTargets: boolean;
  node: string;
  at: string;
}

export async function runSchedules(opts: SchedulesOptions): Promise<SchedulesReport> {
  process.stderr.write(`engine: a year of instalments for ${opts.engineSchedules} schedules…\n`);
  const e = benchmarkEngineDetailed(opts.engineSchedules);
  const engineSeconds = e.ms / 1000;

  const name = await createBenchDatabase(opts.pgUrl);
  const dropDb = onCleanup(`drop database ${name}`, () => dropBenchDatabase(opts.pgUrl, name));
  const db = await openDatabase({ url: withDatabase(opts.pgUrl, name), poolSize: opts.concurrency + 4 });
  const closeDb = onCleanup('close pool', () => db.close());
  try {
    await migrate(db);
    const org = await createOrg(db, 'Bench');
    const [o] = await db.query<{ id: string }>('SELECT id FROM orgs WHERE guid = $1', [org.orgGuid]);
    const [k] = await db.query<{ id: string }>('SELECT id FROM api_keys WHERE org_id = $1', [o!.id]);
    await db.query(
      `UPDATE orgs SET settings = settings || '{"scheduleMode":"Internal"}'::jsonb WHERE id = $1`,
      [o!.id],
    );
    // 1,000 Internal schedules with 10 instalments each, all due (seeded directly: the API's own
    // cost is the charge benchmark's business).
    const perSchedule = 10;
    const schedules = Math.ceil(opts.instalments / perSchedule);
    process.stderr.write(`scheduler: seeding ${schedules} schedules × ${perSchedule} due instalments…\n`);
    await db.query(
      `INSERT INTO schedules (org_id, schedule_num, status, handling_mode, frequency, start_date, payments_count,
         total_minor, first_minor, per_payment_minor, currency, method, instrument, api_key_id, unique_transaction_id)
       SELECT $1, nextval('schedule_seq'), 'active', 'Internal', 'Daily', current_date - 30, $3, 1800 * $3, 1800, 1800,
         'USD', 'Credit_Card',
         jsonb_build_object('brand', 'Visa', 'last4', '4242', 'expiry', '12/30',
           'token', 'sbx_tok_s_' || lpad(to_hex(g), 16, '0')),
         $2, gen_random_uuid()::text
       FROM generate_series(1, $4) g`,
      [o!.id, k!.id, perSchedule, schedules],
    );
    await db.query(
      `INSERT INTO schedule_instalments
         (schedule_id, sequence, due_date, nominal_date, hebrew_date, amount_minor, status, due_at)
       SELECT s.id, q, current_date - 30 + q, current_date - 30 + q, '', 1800, 'pending',
         (current_date - 30 + q)::timestamp AT TIME ZONE 'America/New_York'
       FROM schedules s, generate_series(1, $1) q WHERE s.org_id = $2`,
      [perSchedule, o!.id],
    );
    const deps = await benchDeps(db);
    const scheduler = recurringScheduler(deps);
    process.stderr.write(`scheduler: charging with ${opts.concurrency} workers…\n`);
    const started = performance.now();
    await Promise.all(Array.from({ length: opts.concurrency }, () => scheduler.drain()));
    const seconds = (performance.now() - started) / 1000;
    const [counts] = await db.query<{ successes: number; duplicates: number }>(
      `SELECT (SELECT count(*)::int FROM payments WHERE status = 'Success') AS successes,
         (SELECT count(*)::int FROM (SELECT 1 FROM payments WHERE status = 'Success'
            GROUP BY schedule_id, instalment_seq HAVING count(*) > 1) d) AS duplicates`,
    );
    const total = schedules * perSchedule;
    const schedulerMet = seconds <= 30 && counts!.successes === total && counts!.duplicates === 0;
    return {
      name: 'schedules',
      engine: {
        schedules: opts.engineSchedules,
        instalments: e.instalments,
        seconds: round(engineSeconds),
        target: 5,
        met: engineSeconds <= 5,
      },
      scheduler: {
        db: 'postgres',
        instalments: total,
        concurrency: opts.concurrency,
        seconds: round(seconds),
        perSecond: Math.round(total / seconds),
        successes: counts!.successes,
        duplicates: counts!.duplicates,
        target: 30,
        met: schedulerMet,
      },
      meetsTargets: engineSeconds <= 5 && schedulerMet,
      node: process.version,
      at: new Date().toISOString(),
    };
  } finally {
    await closeDb.run();
    await dropDb.run();
  }
}

const round = (n: number) => Math.round(n * 100) / 100;

export function formatSchedules(r: SchedulesReport): string {
  const ok = (b: boolean) => (b ? 'met' : 'MISSED');
  return [
    `engine: ${r.engine.schedules} schedules, ${r.engine.instalments} instalments in ${r.engine.seconds} s (target ≤ ${r.engine.target} s: ${ok(r.engine.met)})`,
    `scheduler (PostgreSQL, ${r.scheduler.concurrency} workers): ${r.scheduler.instalments} instalments in ${r.scheduler.seconds} s = ${r.scheduler.perSecond}/s, ${r.scheduler.successes} payments, ${r.scheduler.duplicates} charged twice (target ≤ ${r.scheduler.target} s: ${ok(r.scheduler.met)})`,
  ].join('\n');
}
