/**
 * The server process is killed (SIGKILL) again and again while charges commit and receipt e-mails
 * are being sent to a slow SMTP server. After restarts every committed receipt has been e-mailed;
 * nothing that was never committed is sent; a receipt sent again after a kill (the server had
 * accepted it, the process died before recording it) carries the same Message-ID.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, testDatabases } from '../testing/harness.ts';
import { adminPortFor, restartablePort, startServerProcess } from '../testing/server-process.ts';
import { type SmtpReceiver, startSmtpReceiver } from '../testing/smtp-receiver.ts';

const ADMIN = 'receipt-crash-admin-token-0123456789';
const card = { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' };

describe.each(await testDatabases())(
  'SIGKILL while receipts are e-mailed on %s',
  { timeout: 180_000 },
  (kind) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'kupah-receipt-crash-'));
    const database = `kupah_rcrash_${randomBytes(4).toString('hex')}`;
    let rx: SmtpReceiver;
    afterAll(async () => {
      await rx?.close();
      rmSync(dataDir, { recursive: true, force: true });
      if (kind === 'postgres') {
        const c = new pg.Client({ connectionString: PG_URL.replace(/\/[^/]*$/, '/postgres') });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await c.end();
      }
    });

    it('after repeated kills and restarts, every committed receipt is e-mailed, none lost', async () => {
      if (kind === 'postgres') {
        const c = new pg.Client({ connectionString: PG_URL.replace(/\/[^/]*$/, '/postgres') });
        await c.connect();
        await c.query(`CREATE DATABASE ${database}`);
        await c.end();
      }
      rx = await startSmtpReceiver();
      rx.delayMs = () => 20 + Math.floor(Math.random() * 100);
      const port = await restartablePort();
      const url = `http://127.0.0.1:${port}`;
      const env = {
        ADMIN_TOKEN: ADMIN,
        LOG_LEVEL: 'silent',
        SMTP_URL: rx.url,
        RECEIPTS_FROM: 'receipts@crash.example',
        RECEIPT_LEASE_MS: '1500',
        RECEIPT_RETRY_MS: '50',
        ...(kind === 'postgres'
          ? { DATABASE_URL: PG_URL.replace(/\/[^/]*$/, `/${database}`), DATA_DIR: dataDir }
          : { DATABASE_URL: '', DATA_DIR: dataDir }),
      };
      const start = async () => (await startServerProcess(port, env)).child;
      // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field.
      type Json = Record<string, any>;
      const admin = async (method: string, path: string, body?: unknown) =>
        (
          await fetch(`http://127.0.0.1:${adminPortFor(port)}/admin${path}`, {
            method,
            headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          })
        ).json() as Promise<Json>;

      let child = await start();
      const org = await admin('POST', '/orgs', { name: 'Receipt crash test' });
      await admin('PATCH', `/orgs/${org.orgGuid}/settings`, {
        receipts: { legalName: 'Crash Test Charity', taxId: '12-3456789' },
        rateLimit: { perSecond: 100_000, burst: 100_000 },
      });
      const api = async (method: string, path: string, body?: unknown) =>
        (
          await fetch(`${url}${path}`, {
            method,
            headers: { apikey: org.apiKey, 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          })
        ).json() as Promise<Json>;
      const donors: string[] = [];
      for (let i = 0; i < 8; i++) {
        const d = await api('PUT', '/V1/External/SaveDonor', {
          orgGuid: org.orgGuid,
          donorID: '',
          firstName: `Donor${i}`,
          lastName: 'Crash',
          donorEmails: [{ emailAddress: `donor${i}@crash.example` }],
        });
        donors.push(d.donorId);
      }

      const succeeded = new Set<string>();
      for (let round = 0; round < 3; round++) {
        const sentBefore = rx.received.length;
        const charges = Array.from({ length: 30 }, (_, i) =>
          fetch(`${url}/v1/External/Charge`, {
            method: 'POST',
            signal: AbortSignal.timeout(10_000),
            headers: { authorization: org.sourceGuid, 'content-type': 'application/json' },
            body: JSON.stringify({
              orgGUID: org.orgGuid,
              amount: 18 + i,
              currency: 'USD',
              paymentMethodId: 'Credit_Card',
              uniqueTransactionId: `rcrash-${round}-${i}`,
              card,
              donor: { accountNum: donors[i % donors.length] },
            }),
          })
            .then((r) => r.json() as Promise<{ receiptNum: string; paymentStatus: string }>)
            .then((b) => {
              if (b.paymentStatus === 'Success') succeeded.add(b.receiptNum);
            })
            .catch(() => {}),
        );
        // Kill while e-mails are in flight: once a few of this round's have been accepted.
        for (let i = 0; i < 500 && rx.received.length < sentBefore + 3; i++) {
          await new Promise((r) => setTimeout(r, 10));
        }
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await Promise.all(charges);
        await exited;
        child = await start();
      }

      // The last instance sends the rest (leases of killed instances run out after 1.5 s).
      const deadline = Date.now() + 90_000;
      let pending = 1;
      while (Date.now() < deadline) {
        pending = (await api('GET', '/v1/External/Receipts?status=pending&limit=500')).deliveries.length;
        if (pending === 0) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      const all = (await api('GET', '/v1/External/Receipts?limit=500')).deliveries as {
        receiptNum: string;
        status: string;
      }[];
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;

      expect(pending).toBe(0);
      expect(all.every((d) => d.status === 'sent')).toBe(true);
      const receiptOf = (raw: Buffer) => /^X-Kupah-Receipt: receipt (\S+)/im.exec(raw.toString('utf8'))?.[1];
      const mailed = new Map<string, Set<string>>();
      for (const r of rx.received) {
        const receipt = receiptOf(r.raw);
        expect(receipt, 'every e-mail names its receipt').toBeDefined();
        if (!mailed.has(receipt!)) mailed.set(receipt!, new Set());
        mailed.get(receipt!)!.add(r.messageId);
      }
      const committed = new Set(all.map((d) => d.receiptNum));
      // Every committed receipt was e-mailed, under one Message-ID (a resend after a kill reuses it) …
      for (const receipt of committed) expect(mailed.get(receipt)?.size, receipt).toBe(1);
      // … nothing was e-mailed that was never committed …
      for (const receipt of mailed.keys()) expect(committed.has(receipt), receipt).toBe(true);
      // … and every charge answered Success has its receipt.
      for (const receipt of succeeded) expect(committed.has(receipt), receipt).toBe(true);
      expect(committed.size).toBeGreaterThan(30);
    });
  },
);
