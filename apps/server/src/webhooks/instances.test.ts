/**
 * Two server instances on one PostgreSQL: each runs its own dispatcher over its own connection
 * pool; no attempt may be sent twice.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { createMetrics } from '../http/metrics.ts';
import { chargeBody, createHarness, type Harness, PG_URL, testDatabases } from '../testing/harness.ts';
import { type Receiver, startReceiver } from '../testing/receiver.ts';
import { webhookDispatcher } from './dispatcher.ts';

const withPostgres = (await testDatabases()).includes('postgres');

describe.skipIf(!withPostgres)('two instances on one PostgreSQL', () => {
  let h: Harness;
  let rx: Receiver;
  beforeAll(async () => {
    h = await createHarness('postgres');
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
    await h?.close();
  });

  it('never send one attempt twice, and deliver every event', async () => {
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
      paymentWebhook: `${rx.url}/p`,
      rateLimit: { perSecond: 100_000, burst: 100_000 },
    });
    const device = (
      await h.admin('POST', `/orgs/${h.org.orgGuid}/sources`, { name: 'K', kind: 'device', sandbox: true })
    ).body.sourceGuid;
    rx.respond = () => ({ status: 200, hangMs: 5 });
    const otherDb = await openDatabase({ url: PG_URL, schema: h.schema, poolSize: 20 });
    const otherDeps: Deps = {
      ...h.deps,
      db: otherDb,
      logger: pino({ level: 'silent' }),
      metrics: createMetrics(),
    };
    const a = webhookDispatcher(h.deps, { allowPrivate: true, batchSize: 10, pollMs: 20 });
    const b = webhookDispatcher(otherDeps, { allowPrivate: true, batchSize: 10, pollMs: 20 });
    await a.start();
    await b.start();
    const n = 300;
    try {
      for (let i = 0; i < n; i += 25) {
        await Promise.all(
          Array.from({ length: 25 }, () =>
            h.request('POST', '/v1/External/Charge', chargeBody(h), { authorization: device }),
          ),
        );
      }
      const deadline = Date.now() + 30_000;
      while (rx.accepted().size < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await a.stop();
      await b.stop();
      await otherDb.close();
    }
    expect(rx.accepted().size).toBe(n);
    expect(rx.received).toHaveLength(n);
    const [row] = await h.db.query<{ attempts: number; deliveries: number }>(
      `SELECT (SELECT count(*)::int FROM webhook_attempts) AS attempts, (SELECT count(*)::int FROM webhook_deliveries) AS deliveries`,
    );
    expect(row).toEqual({ attempts: n, deliveries: n });
    // Both instances took part.
    const byA = (await h.deps.metrics.webhooksDelivered.get()).values.reduce((s, v) => s + v.value, 0);
    const byB = (await otherDeps.metrics.webhooksDelivered.get()).values.reduce((s, v) => s + v.value, 0);
    expect(byA + byB).toBe(n);
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);
  });
});
