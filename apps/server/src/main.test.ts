/**
 * The server as users start it: a real process, real loopback HTTP, an embedded database on disk.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SERVER_DIR, type ServerProcess, startServerProcess } from './testing/server-process.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'kupah-main-'));

async function start(port: number, dir = dataDir): Promise<ServerProcess> {
  return startServerProcess(port, { DATA_DIR: dir, LOG_LEVEL: 'info', ADMIN_TOKEN: '', DATABASE_URL: '' });
}

const port = 20_000 + Math.floor(Math.random() * 20_000);

describe('the server process', { timeout: 60_000 }, () => {
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('first start on an empty embedded database prints a demo org whose credentials work at once', async () => {
    const s = await start(port);
    try {
      const out = s.output();
      const orgGuid = /ORG_GUID=(\S+)/.exec(out)?.[1];
      const apiKey = /API_KEY=(\S+)/.exec(out)?.[1];
      const sourceGuid = /SOURCE_GUID=(\S+)/.exec(out)?.[1];
      expect(orgGuid && apiKey && sourceGuid).toBeTruthy();
      const charge = await fetch(`${s.url}/v1/External/Charge`, {
        method: 'POST',
        headers: { Authorization: sourceGuid!, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          orgGUID: orgGuid,
          amount: 36,
          paymentMethodId: 'Credit_Card',
          uniqueTransactionId: 'main-test-1',
          currency: 'ILS',
          card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
        }),
      });
      expect(((await charge.json()) as { paymentStatus: string }).paymentStatus).toBe('Success');
      const donor = await fetch(`${s.url}/V1/External/SaveDonor`, {
        method: 'PUT',
        headers: { APIKey: apiKey!, 'Content-Type': 'application/json' },
        body: JSON.stringify({ orgGuid, donorID: '', firstName: 'Test', lastName: 'Donor' }),
      });
      expect(donor.status).toBe(200);
      // The admin token was generated into DATA_DIR/admin-token and works.
      const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
      const admin = await fetch(`${s.adminUrl}/admin/orgs/${orgGuid}`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(admin.status).toBe(200);
      // Structured JSON logs with a request id, and never the card number.
      await new Promise((r) => setTimeout(r, 100));
      const lines = s
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'));
      const chargeLog = lines.map((l) => JSON.parse(l)).find((l) => l.path === '/v1/External/Charge');
      expect(chargeLog).toMatchObject({ status: 200, requestId: expect.any(String) });
      expect(s.output()).not.toContain('4242424242424242');
    } finally {
      s.child.kill('SIGTERM');
      await s.exited;
    }
  });

  it('the second start prints no credentials; SIGTERM lets a request in flight finish, then exits 0', async () => {
    const s = await start(port + 1);
    expect(s.output()).not.toContain('API_KEY=');
    // A request whose body is still arriving when SIGTERM comes must still be answered.
    const body = JSON.stringify({
      orgGuid: '00000000-0000-4000-8000-000000000000',
      campaignNumber: 0,
      campaignName: 'x',
    });
    const answered = new Promise<number>((resolve, reject) => {
      const req = request(`${s.url}/V1/External/SaveCampaign`, {
        method: 'PUT',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          apikey: 'kpk_test_x',
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        s.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 300);
      }, 100);
    });
    expect(await answered).toBe(401);
    expect(await s.exited).toBe(0);
    expect(s.output()).toContain('shutting down');
  });

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'one %s to the `npm start` process itself shuts the server down gracefully (nothing left running)',
    async (signal) => {
      const dir = mkdtempSync(join(tmpdir(), 'kupah-npm-start-'));
      const p = port + (signal === 'SIGTERM' ? 3 : 5);
      // --ignore-scripts skips only the prestart step (the terminal's web build), not start itself.
      const npm = spawn('npm', ['start', '--ignore-scripts'], {
        cwd: join(SERVER_DIR, '..', '..'),
        env: {
          ...process.env,
          PORT: String(p),
          HOST: '127.0.0.1',
          ADMIN_PORT: String(p + 1),
          DATA_DIR: dir,
          ADMIN_TOKEN: '',
          DATABASE_URL: '',
          LOG_LEVEL: 'info',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      npm.stdout.on('data', (d) => {
        out += d;
      });
      npm.stderr.on('data', (d) => {
        out += d;
      });
      const exited = new Promise<void>((r) => npm.once('exit', () => r()));
      const answers = async () => {
        try {
          return (await fetch(`http://127.0.0.1:${p}/readyz`)).ok;
        } catch {
          return false;
        }
      };
      try {
        const deadline = Date.now() + 90_000;
        while (!(await answers())) {
          if (Date.now() > deadline) throw new Error(`the server did not start:\n${out}`);
          await new Promise((r) => setTimeout(r, 200));
        }
        npm.kill(signal);
        await exited;
        // The server itself went through its graceful shutdown and is gone, not orphaned.
        const stopBy = Date.now() + 15_000;
        while ((!out.includes('"msg":"stopped"') || (await answers())) && Date.now() < stopBy) {
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(out).toContain(`"signal":"${signal}"`);
        expect(out).toContain('"msg":"stopped"');
        expect(await answers()).toBe(false);
      } finally {
        npm.kill('SIGKILL');
        // Should the test fail, leave no server behind (its pid is in every log line).
        const serverPid = Number(/"pid":(\d+)/.exec(out)?.[1]);
        if (serverPid) {
          try {
            process.kill(serverPid, 'SIGKILL');
          } catch {}
        }
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it("the README's curl examples for all eight operations succeed as printed", async () => {
    const readme = readFileSync(join(SERVER_DIR, '..', '..', 'README.md'), 'utf8');
    const block = /```sh\n(BASE=[\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeTruthy();
    const dir = mkdtempSync(join(tmpdir(), 'kupah-readme-'));
    const s = await start(port + 2, dir);
    try {
      const vars = Object.fromEntries(
        [...s.output().matchAll(/(ORG_GUID|API_KEY|SOURCE_GUID)=(\S+)/g)].map((m) => [m[1]!, m[2]!]),
      );
      const script = block!.replace('BASE=http://127.0.0.1:8787', `BASE=${s.url}`);
      const out = execFileSync('bash', ['-c', `set -e\n${script}`], {
        env: { ...process.env, ...vars },
        encoding: 'utf8',
      });
      const answers = out
        .split(/(?<=})(?={)/)
        .map((a) => a.trim())
        .filter(Boolean)
        .map((a) => JSON.parse(a));
      expect(answers).toHaveLength(8);
      for (const a of answers) expect(a.error ?? { errorCode: null }).toMatchObject({ errorCode: null });
      expect(answers[0]).toMatchObject({ paymentStatus: 'Success', receiptNum: 'R100001' });
      expect(answers[1]).toMatchObject({ paymentStatus: 'Success', scheduleTotal: 432 });
      expect(answers[2]).toMatchObject({ paymentStatus: 'Voided' });
      expect(answers[3]).toMatchObject({
        receiptNum: 'R100002',
        paymentStatus: 'PartiallyRefunded',
        refundStatus: 'Succeeded',
        refundAmount: 10,
      });
      expect(answers[4].donorId).toMatch(/^D\d+$/);
      expect(answers[5].collectorId).toMatch(/^C\d+$/);
      expect(answers[6].campaignNumber).toBe(1);
      expect(answers[7]).toMatchObject({ reasonName: 'Kiddush', campaignNum: 1 });

      // The read API's examples, on what the examples above made (run where the CSV may be written).
      const reads = /```sh\n(# Read API[\s\S]*?)```/.exec(readme)?.[1];
      expect(reads).toBeTruthy();
      const readOut = execFileSync('bash', ['-c', `set -e\nBASE=${s.url}\n${reads}`], {
        env: { ...process.env, ...vars },
        encoding: 'utf8',
        cwd: dir,
      });
      const [list, one, totals, found, donor] = readOut.split(/(?<=})(?={)/).map((a) => JSON.parse(a.trim()));
      expect(
        list.payments.map((p: { receiptNum: string; status: string }) => [p.receiptNum, p.status]),
      ).toEqual(
        expect.arrayContaining([
          ['R100001', 'Voided'],
          ['R100002', 'PartiallyRefunded'],
        ]),
      );
      expect(one).toMatchObject({ receiptNum: 'R100001', status: 'Voided', donorId: 'D100001' });
      expect(totals.totals[0]).toMatchObject({ currency: 'USD', voided: { count: 1, amountMinor: 1800 } });
      expect(found.donors.map((d: { donorId: string }) => d.donorId)).toEqual([answers[4].donorId]);
      expect(donor.donor.donorId).toBe('D100001');
      const csv = readFileSync(join(dir, 'payments.csv'), 'utf8');
      expect(csv.startsWith('\uFEFFreceiptNum,')).toBe(true);
      expect(csv.trim().split('\r\n')).toHaveLength(3);
    } finally {
      s.child.kill('SIGTERM');
      await s.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
