/**
 * A real server process in Internal mode, moved through simulated days by its clock file and
 * killed with SIGKILL again and again while it charges instalments. A charge cut off by a kill is
 * left Pending and resolved by the recovery worker from the gateway's own record (the sandbox
 * keeps its journal across kills, as a real gateway does). After the restarts every instalment due
 * is charged exactly once.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, testDatabases } from '../testing/harness.ts';
import { adminPortFor, restartablePort, startServerProcess } from '../testing/server-process.ts';

const ADMIN = 'scheduler-crash-admin-token-012345';

describe.each(await testDatabases())('scheduler killed mid-run on %s', { timeout: 240_000 }, (kind) => {
  const dir = mkdtempSync(join(tmpdir(), 'kupah-sched-crash-'));
  const clockFile = join(dir, 'clock');
  const database = `kupah_sched_${randomBytes(4).toString('hex')}`;
  const adminDb = PG_URL.replace(/\/[^/]*$/, '/postgres');
  let child: ChildProcess | null = null;
  afterAll(async () => {
    // Whatever a failed or timed-out run left behind: never leave a server process running.
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    if (kind === 'postgres') {
      const c = new pg.Client({ connectionString: adminDb });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await c.end();
    }
  });

  it('every due instalment is charged exactly once across kills and restarts', async () => {
    if (kind === 'postgres') {
      const c = new pg.Client({ connectionString: adminDb });
      await c.connect();
      await c.query(`CREATE DATABASE ${database}`);
      await c.end();
    }
    let now = new Date('2026-11-23T14:00:00Z');
    writeFileSync(clockFile, now.toISOString());
    const port = await restartablePort();
    const url = `http://127.0.0.1:${port}`;
    const env = {
      ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'silent',
      KUPAH_CLOCK_FILE: clockFile,
      SCHEDULER_POLL_MS: '50',
      RECOVERY_POLL_MS: '100',
      GATEWAY_TIMEOUT_MS: '2000',
      GATEWAY_SETTLE_MS: '0',
      SANDBOX_GATEWAY_JOURNAL: join(dir, 'gateway-journal'),
      WEBHOOK_DISPATCHER: '0',
      DATA_DIR: join(dir, 'data'),
      DATABASE_URL: kind === 'postgres' ? PG_URL.replace(/\/[^/]*$/, `/${database}`) : '',
    };
    const start = async () => (await startServerProcess(port, env)).child;
    const call = async (method: string, path: string, body: unknown, headers: Record<string, string>) =>
      (
        await fetch(`${path.startsWith('/admin/') ? `http://127.0.0.1:${adminPortFor(port)}` : url}${path}`, {
          method,
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify(body),
        })
      ).json() as Promise<Record<string, unknown>>;

    child = await start();
    const org = await call(
      'POST',
      '/admin/orgs',
      { name: 'Sched crash' },
      { authorization: `Bearer ${ADMIN}` },
    );
    await call(
      'PATCH',
      `/admin/orgs/${org.orgGuid}/settings`,
      { scheduleMode: 'Internal', rateLimit: { perSecond: 100_000, burst: 100_000 } },
      { authorization: `Bearer ${ADMIN}` },
    );
    const schedules: number[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await call(
        'POST',
        '/v1/External/SchedulePayment',
        {
          orgGUID: org.orgGuid,
          currency: 'USD',
          paymentMethodId: 'Credit_Card',
          uniqueTransactionId: randomUUID(),
          card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
          scheduleDetails: {
            frequencyID: 'Daily',
            startDate: '2026-11-23',
            totalPaymentsCount: 15,
            amountPerPayment: 3,
          },
        },
        { apikey: String(org.apiKey) },
      );
      expect(r.paymentStatus).toBe('Success');
      schedules.push(Number(r.scheduleNum));
    }
    // Fourteen simulated days; on most of them the process is killed while it charges.
    for (let day = 1; day <= 14; day++) {
      now = new Date(now.getTime() + 86_400_000);
      writeFileSync(clockFile, now.toISOString());
      if (day % 3 !== 0) {
        await new Promise((r) => setTimeout(r, 30 + Math.floor(Math.random() * 60)));
        const dying = child;
        const exited = new Promise((r) => dying.once('exit', r));
        dying.kill('SIGKILL');
        await exited;
        child = await start();
      }
    }
    // Time goes on (a charge cut off by a kill is recovered once its lease has passed, or released
    // and charged again); let the last instance catch up, then check through the management API.
    let later = now.getTime() + 3_600_000;
    writeFileSync(clockFile, new Date(later).toISOString());
    const deadline = Date.now() + 100_000;
    let charged = 0;
    while (Date.now() < deadline) {
      // Simulated time keeps going (a minute per check): an instalment whose cut-off charge recovery
      // released is due again 5 minutes later.
      later += 60_000;
      writeFileSync(clockFile, new Date(later).toISOString());
      const list = await fetch(`${url}/v1/External/Schedules?orgGuid=${org.orgGuid}&limit=100`, {
        headers: { apikey: String(org.apiKey) },
      }).then((r) => r.json() as Promise<{ schedules: { paymentsCharged: number; status: string }[] }>);
      charged = list.schedules.reduce((n, s) => n + s.paymentsCharged, 0);
      if (charged === 12 * 15 && list.schedules.every((s) => s.status === 'completed')) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const last = child;
    const exited = new Promise((r) => last.once('exit', r));
    last.kill('SIGTERM');
    await exited;
    child = null;
    if (charged !== 12 * 15 && kind === 'postgres') {
      const c = new pg.Client({ connectionString: env.DATABASE_URL });
      await c.connect();
      const { rows } = await c.query(
        `SELECT i.sequence, i.status, i.attempts, i.last_error, i.due_at, p.status AS payment, p.gateway_state,
           p.recovery_after, p.recovery_note FROM schedule_instalments i LEFT JOIN payments p ON p.id = i.payment_id
         WHERE i.status <> 'charged'`,
      );
      await c.end();
      console.error('not charged:', JSON.stringify(rows, null, 1), 'clock', now.toISOString());
    }
    expect(charged).toBe(12 * 15);
    if (kind === 'postgres') {
      const c = new pg.Client({ connectionString: env.DATABASE_URL });
      await c.connect();
      const { rows } = await c.query(
        `SELECT schedule_id, instalment_seq, count(*)::int AS n FROM payments WHERE status = 'Success'
         GROUP BY schedule_id, instalment_seq HAVING count(*) > 1`,
      );
      const total = await c.query(`SELECT count(*)::int AS n FROM payments WHERE status = 'Success'`);
      await c.end();
      expect(rows).toEqual([]);
      expect(total.rows[0].n).toBe(12 * 15);
    }
  });
});
