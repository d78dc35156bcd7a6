/**
 * Exactly once under faults: thousands of payments queued in the terminal's own data layer (the
 * same code the renderer runs, on fake-indexeddb in Node) are forwarded to a real server process
 * that is killed with SIGKILL at random moments and restarted. Afterwards the gateway has charged
 * each payment once, the device shows every item done with the server's receipt number, and each
 * payment has exactly one payment webhook id. Then the same with two "tabs" of one device syncing
 * at once, with no lock between them (the worst case: the server alone keeps it exactly once).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { paymentWebhook, type TerminalBridge } from '@kupah/contracts';
import type { TerminalData } from '@kupah/terminal-core';
import { createTerminalData } from '@kupah/terminal-core';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/src/db/database.ts';
import { PG_URL, testDatabases } from '../../server/src/testing/harness.ts';
import { type Receiver, startReceiver } from '../../server/src/testing/receiver.ts';
import {
  adminClient,
  restartablePort,
  type ServerProcess,
  startServerProcess,
} from '../../server/src/testing/server-process.ts';

const ADMIN = 'sync-faults-admin-token-0123456789';

const nodeBridge = (name: string): TerminalBridge => ({
  platform: 'web',
  appVersion: async () => 'fault-test',
  hostName: async () => name,
  timeZone: () => 'America/New_York',
  location: async () => ({ locationName: 'Hall A', latitude: 40.7, longitude: -74 }),
  printReceipt: async () => ({ printed: false }),
  secrets: null,
  setKiosk: async () => {},
});

/** Mutual exclusion per name, like navigator.locks within one process. */
function processLocks() {
  const tails = new Map<string, Promise<unknown>>();
  return {
    request<T>(name: string, cb: () => Promise<T>): Promise<T> {
      const prev = tails.get(name) ?? Promise.resolve();
      const run = prev.then(cb, cb);
      tails.set(
        name,
        run.catch(() => {}),
      );
      return run;
    },
  };
}

/** No exclusion at all: two tabs without Web Locks. */
const noLocks = { request: <T>(_name: string, cb: () => Promise<T>) => cb() };

interface AdminReply {
  orgGuid: string;
  pairingCode: string;
  webhookSecrets: { payment: { secret: string } };
}

/**
 * The suite's size: 1,200 payments and 8 kills per database (about a third of the time of the
 * 3,000 and 16 it ran with before). The heavier run: SYNC_FAULT_PAYMENTS=3000 SYNC_FAULT_KILLS=16.
 */
const COUNT = Number(process.env.SYNC_FAULT_PAYMENTS ?? 1200);
const KILLS = Number(process.env.SYNC_FAULT_KILLS ?? 8);

describe.each(await testDatabases())('device sync exactly once under SIGKILL on %s', (kind) => {
  const dir = mkdtempSync(join(tmpdir(), 'kupah-sync-faults-'));
  const database = `kupah_sync_${randomBytes(4).toString('hex')}`;
  const adminDb = PG_URL.replace(/\/[^/]*$/, '/postgres');
  const dbUrl = PG_URL.replace(/\/[^/]*$/, `/${database}`);
  let receiver: Receiver;
  let server: ServerProcess | null = null;
  const started: ServerProcess[] = [];
  const start = async (port: number, env: NodeJS.ProcessEnv) => {
    const s = await startServerProcess(port, env);
    started.push(s);
    return s;
  };
  afterAll(async () => {
    // Every process this file started, whatever state a failed test left them in.
    await Promise.all(started.map((s) => s.kill('SIGKILL')));
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
    if (kind === 'postgres') {
      const c = new pg.Client({ connectionString: adminDb });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await c.end();
    }
  });

  for (const scenario of ['one tab', 'two tabs'] as const) {
    it(`${scenario}: ${scenario === 'one tab' ? COUNT : COUNT / 2} payments, ${scenario === 'one tab' ? KILLS : KILLS / 2} kills`, async () => {
      const count = scenario === 'one tab' ? COUNT : COUNT / 2;
      const kills = scenario === 'one tab' ? KILLS : KILLS / 2;
      const journal = join(dir, `gateway-${scenario.replace(' ', '-')}.journal`);
      if (!receiver) {
        receiver = await startReceiver();
        if (kind === 'postgres') {
          const c = new pg.Client({ connectionString: adminDb });
          await c.connect();
          await c.query(`CREATE DATABASE ${database}`);
          await c.end();
        }
      }
      const port = await restartablePort();
      const env = {
        ADMIN_TOKEN: ADMIN,
        LOG_LEVEL: 'silent',
        WEBHOOK_ALLOW_PRIVATE: '1',
        SCHEDULER: '0',
        DATA_DIR: join(dir, 'data'),
        DATABASE_URL: kind === 'postgres' ? dbUrl : '',
        SANDBOX_GATEWAY_JOURNAL: journal,
        // A killed instance's claimed deliveries are retried after the lease: keep it short here.
        WEBHOOK_LEASE_MS: '1500',
        // A charge cut off by a kill stays Pending until recovery asks the gateway (after the
        // time-out plus the settle time): keep those short too.
        GATEWAY_TIMEOUT_MS: '2000',
        GATEWAY_SETTLE_MS: '0',
        RECOVERY_POLL_MS: '200',
      };
      server = await start(port, env);
      const admin = adminClient(() => server!.adminUrl, ADMIN);
      const org = await admin<AdminReply>('POST', '/orgs', { name: `Faults ${scenario}` });
      const settings = await admin<AdminReply>('PATCH', `/orgs/${org.orgGuid}/settings`, {
        paymentWebhook: `${receiver.url}/payment`,
        rateLimit: { perSecond: 100_000, burst: 100_000 },
        offline: { perPaymentMinor: 1_000_000, totalMinor: 100_000_000, expiryHours: 72 },
      });
      receiver.secrets.push(settings.webhookSecrets.payment.secret);
      const device = await admin<AdminReply>('POST', `/orgs/${org.orgGuid}/devices`, {
        name: 'Hall kiosk',
        sandbox: true,
      });

      const indexedDB = new IDBFactory();
      const dbName = `faults-${scenario}`;
      const make = (locks: { request<T>(name: string, cb: () => Promise<T>): Promise<T> }) =>
        createTerminalData({
          bridge: nodeBridge('Hall kiosk'),
          dbName,
          indexedDB,
          IDBKeyRange,
          locks,
          // Items a kill left being confirmed are asked about again after 2 s here, not 30 s.
          confirmRecheckMs: 2_000,
        });
      const tabs: TerminalData[] =
        scenario === 'one tab' ? [make(processLocks())] : [make(noLocks), make(noLocks)];
      await tabs[0]!.pair(server.url, device.pairingCode, 'Hall kiosk');

      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const item = await tabs[i % tabs.length]!.enqueue({
          kind: 'charge',
          request: {
            amount: 5 + (i % 50),
            currency: 'USD',
            paymentMethodId: 'Credit_Card',
            card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
            donor: { firstName: 'Fault', lastName: `Tester ${i}` },
          },
        });
        ids.push(item.id);
      }

      // The killer: SIGKILL at random moments while the tabs sync, restart at once.
      let killed = 0;
      const killer = (async () => {
        while (killed < kills) {
          await new Promise((r) => setTimeout(r, 150 + Math.random() * 900));
          await server!.kill('SIGKILL');
          killed++;
          server = await start(port, env);
        }
      })();
      const pending = async () => (await tabs[0]!.summary()).pending;
      const deadline = Date.now() + 200_000;
      while (Date.now() < deadline) {
        await Promise.all(tabs.map((t) => t.syncNow().catch(() => {})));
        if (killed >= kills && (await pending()) === 0) break;
      }
      await killer;
      expect(await pending()).toBe(0);

      // The device: every item done with a receipt number.
      const items = await tabs[0]!.listOutbox({ limit: count + 10 });
      expect(items).toHaveLength(count);
      expect(items.filter((i) => i.state !== 'done')).toEqual([]);
      const deviceReceipts = new Map(items.map((i) => [i.id, i.receiptNum]));

      // The gateway: exactly one charge per uniqueTransactionId.
      const charges = readFileSync(journal, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('auth:'))
        .map((l) => l.slice(0, l.indexOf('\t')));
      expect(charges).toHaveLength(count);
      expect(new Set(charges).size).toBe(count);
      expect(new Set(charges.map((k) => k.split(':').at(-1)))).toEqual(new Set(ids));

      // The server: one payment per id, with the receipt the device shows.
      await server.kill('SIGTERM');
      server = null;
      const db = await openDatabase(kind === 'postgres' ? { url: dbUrl } : { dataDir: join(dir, 'data') });
      try {
        const rows = await db.query<{ unique_transaction_id: string; receipt_num: string }>(
          `SELECT p.unique_transaction_id, p.receipt_num FROM payments p JOIN orgs o ON o.id = p.org_id
            WHERE o.guid = $1`,
          [org.orgGuid],
        );
        expect(rows).toHaveLength(count);
        for (const r of rows) expect(deviceReceipts.get(r.unique_transaction_id)).toBe(r.receipt_num);
      } finally {
        await db.close();
      }

      // Webhooks: restart once more to let the dispatcher finish, then one webhook id per payment.
      server = await start(port, env);
      const wanted = new Set(rows(deviceReceipts));
      const byPayment = new Map<string, Set<string>>();
      const until = Date.now() + 60_000;
      while (Date.now() < until) {
        byPayment.clear();
        for (const r of receiver.received) {
          if (!r.verified || r.status !== 200) continue;
          const body = JSON.parse(r.body) as { paymentNumber: string };
          if (!wanted.has(body.paymentNumber)) continue;
          const set = byPayment.get(body.paymentNumber) ?? new Set<string>();
          set.add(r.webhookId);
          byPayment.set(body.paymentNumber, set);
        }
        if (byPayment.size === wanted.size) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(byPayment.size).toBe(count);
      for (const ids of byPayment.values()) expect(ids.size).toBe(1);
      const sample = receiver.received.find((r) => wanted.has(JSON.parse(r.body).paymentNumber))!;
      const hook = paymentWebhook.parse(JSON.parse(sample.body));
      expect(hook).toMatchObject({ deviceName: 'Hall kiosk', timezone: 'America/New_York' });
      expect(hook.locationInfo).toMatchObject({ locationName: 'Hall A' });
      await server.kill('SIGTERM');
      server = null;
      for (const t of tabs) t.stop();
    });
  }
});

function rows(receipts: Map<string, string | null>): string[] {
  return [...receipts.values()].filter((r): r is string => r !== null);
}
