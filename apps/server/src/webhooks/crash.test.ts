/**
 * The server process is killed (SIGKILL) again and again while charges commit and deliveries are
 * in flight. After restarts every committed event is delivered, and nothing that was never
 * committed is ever sent.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, testDatabases } from '../testing/harness.ts';
import { type Receiver, startReceiver } from '../testing/receiver.ts';
import { adminPortFor, restartablePort, startServerProcess } from '../testing/server-process.ts';

const ADMIN = 'crash-test-admin-token-0123456789';
const card = { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' };

describe.each(await testDatabases())('SIGKILL during deliveries on %s', { timeout: 120_000 }, (kind) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'kupah-crash-'));
  const database = `kupah_crash_${randomBytes(4).toString('hex')}`;
  let rx: Receiver;
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

  it('after repeated kills and restarts, every committed event is delivered and no other', async () => {
    if (kind === 'postgres') {
      const c = new pg.Client({ connectionString: PG_URL.replace(/\/[^/]*$/, '/postgres') });
      await c.connect();
      await c.query(`CREATE DATABASE ${database}`);
      await c.end();
    }
    rx = await startReceiver();
    rx.respond = () => ({ status: 200, hangMs: 20 + Math.floor(Math.random() * 80) });
    const port = await restartablePort();
    const url = `http://127.0.0.1:${port}`;
    const env = {
      ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'silent',
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_LEASE_MS: '1500',
      ...(kind === 'postgres'
        ? { DATABASE_URL: PG_URL.replace(/\/[^/]*$/, `/${database}`), DATA_DIR: dataDir }
        : { DATABASE_URL: '', DATA_DIR: dataDir }),
    };
    const start = async () => (await startServerProcess(port, env)).child;
    // biome-ignore lint/suspicious/noExplicitAny: admin answers are read field by field.
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
    const org = await admin('POST', '/orgs', { name: 'Crash test' });
    const settings = await admin('PATCH', `/orgs/${org.orgGuid}/settings`, {
      paymentWebhook: `${rx.url}/p`,
      rateLimit: { perSecond: 100_000, burst: 100_000 },
    });
    rx.secrets = [settings.webhookSecrets.payment.secret];
    const device = (
      await admin('POST', `/orgs/${org.orgGuid}/sources`, { name: 'K', kind: 'device', sandbox: true })
    ).sourceGuid as string;

    const succeeded = new Set<string>();
    for (let round = 0; round < 4; round++) {
      let answered = 0;
      const charges = Array.from({ length: 40 }, (_, i) =>
        fetch(`${url}/v1/External/Charge`, {
          method: 'POST',
          signal: AbortSignal.timeout(10_000),
          headers: { authorization: device, 'content-type': 'application/json' },
          body: JSON.stringify({
            orgGUID: org.orgGuid,
            amount: 18,
            currency: 'USD',
            paymentMethodId: 'Credit_Card',
            uniqueTransactionId: `crash-${round}-${i}`,
            card,
          }),
        })
          .then((r) => r.json() as Promise<{ receiptNum: string; paymentStatus: string }>)
          .then((b) => {
            answered++;
            if (b.paymentStatus === 'Success') succeeded.add(b.receiptNum);
          })
          .catch(() => {}),
      );
      // Kill while charges are in flight and deliveries have started: once the first charges of the
      // round are answered (a freshly started process is slow to answer its first requests).
      for (let i = 0; i < 200 && answered < 3; i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 40 + round * 40));
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await Promise.all(charges);
      await exited;
      child = await start();
    }

    // Let the last instance deliver everything (leases of killed instances expire after 1.5 s).
    const deadline = Date.now() + 60_000;
    let pending = 1;
    while (Date.now() < deadline) {
      pending = (await admin('GET', `/orgs/${org.orgGuid}/deliveries?status=pending&limit=1000`)).deliveries
        .length;
      if (pending === 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const all = (await admin('GET', `/orgs/${org.orgGuid}/deliveries?limit=1000`)).deliveries as {
      webhookId: string;
      status: string;
    }[];
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;

    expect(pending).toBe(0);
    const committed = new Set(all.map((d) => d.webhookId));
    const accepted = rx.accepted();
    expect(all.every((d) => d.status === 'delivered')).toBe(true);
    // Every committed event was delivered …
    for (const id of committed) expect(accepted.has(id), id).toBe(true);
    // … and nothing was sent that was never committed.
    for (const r of rx.received) expect(committed.has(r.webhookId), r.webhookId).toBe(true);
    // Every charge answered Success has its payment webhook.
    const paid = new Set(rx.received.map((r) => JSON.parse(r.body).paymentNumber as string));
    for (const receipt of succeeded) expect(paid.has(receipt), receipt).toBe(true);
    expect(committed.size).toBeGreaterThan(0);
    expect(rx.received.every((r) => r.verified)).toBe(true);
  });
});
