/**
 * `npm run bench -- webhooks`: committed payment events on PostgreSQL delivered by the real
 * dispatcher to a loopback receiver (a separate process answering 200).
 * Throughput: N events committed while the dispatcher is stopped, then delivered (deliveries/s).
 * Latency: events committed one transaction each at a steady rate while the dispatcher runs;
 * commit-to-delivery p50/p99 measured from the commit's return to the receiver's arrival time.
 * Targets (2 cores): ≥ 1,000 deliveries/s, p50 ≤ 200 ms.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createOrg } from '../apps/server/src/admin/admin-service.ts';
import { openDatabase } from '../apps/server/src/db/database.ts';
import { migrate } from '../apps/server/src/db/migrations.ts';
import { upsertWebhookEndpoint } from '../apps/server/src/orgs/repo.ts';
import { insertEvent } from '../apps/server/src/outbox/repo.ts';
import { webhookDispatcher } from '../apps/server/src/webhooks/dispatcher.ts';
import { benchDeps } from './deps.ts';
import { onCleanup, sleep } from './lifecycle.ts';
import { createBenchDatabase, dropBenchDatabase, withDatabase } from './postgres.ts';
import { freePort } from './server.ts';

export interface WebhooksOptions {
  pgUrl: URL;
  events: number;
  latencyRate: number;
  latencySeconds: number;
}

export interface WebhooksReport {
  name: 'webhooks';
  db: 'postgres';
  events: number;
  deliveriesPerSecond: number;
  latency: { events: number; ratePerSecond: number; p50Ms: number; p99Ms: number; maxMs: number };
  targets: { deliveriesPerSecond: number; p50Ms: number };
  meetsTargets: boolean;
  node: string;
  at: string;
}

/** The receiver: records each webhook-id's arrival time; GET /stats answers them all. */
const RECEIVER = `
const http = require('node:http');
const seen = new Map();
http.createServer((req, res) => {
  if (req.method === 'GET') { res.end(JSON.stringify(Object.fromEntries(seen))); return; }
  req.resume();
  req.on('end', () => {
    const id = req.headers['webhook-id'];
    if (!seen.has(id)) seen.set(id, Date.now());
    res.writeHead(200).end();
  });
}).listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

async function startReceiver(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-e', RECEIVER], {
    env: { ...process.env, PORT: String(port) },
    stdio: 'pipe',
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', () => reject(new Error('receiver exited')));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

const stats = async (url: string) => (await (await fetch(`${url}/stats`)).json()) as Record<string, number>;

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export async function runWebhooks(opts: WebhooksOptions): Promise<WebhooksReport> {
  const name = await createBenchDatabase(opts.pgUrl);
  const dropDb = onCleanup(`drop database ${name}`, () => dropBenchDatabase(opts.pgUrl, name));
  const db = await openDatabase({ url: withDatabase(opts.pgUrl, name), poolSize: 20 });
  const closeDb = onCleanup('close pool', () => db.close());
  const receiver = await startReceiver();
  const stopReceiver = onCleanup('receiver', () => receiver.child.kill('SIGKILL'));
  try {
    await migrate(db);
    const org = await createOrg(db, 'Bench');
    const [o] = await db.query<{ id: string }>('SELECT id FROM orgs WHERE guid = $1', [org.orgGuid]);
    const orgId = Number(o!.id);
    await upsertWebhookEndpoint(
      db,
      orgId,
      'payment',
      `${receiver.url}/hooks`,
      'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    );
    const deps = await benchDeps(db);
    const payload = (i: number) => ({
      orgGuid: org.orgGuid,
      processedDateTime: new Date().toISOString(),
      amount: '18.00',
      paymentNumber: `R${i}`,
      paymentStatus: 'Success',
    });

    // Throughput: commit N events (100 per transaction) with no dispatcher, then deliver them all.
    process.stderr.write(`webhooks: committing ${opts.events} events…\n`);
    for (let i = 0; i < opts.events; i += 100) {
      await db.transaction(async (tx) => {
        for (let j = i; j < Math.min(i + 100, opts.events); j++)
          await insertEvent(tx, orgId, 'payment', payload(j), new Date());
      });
    }
    const dispatcher = webhookDispatcher(deps, { allowPrivate: true, batchSize: 200, pollMs: 50 });
    process.stderr.write('webhooks: delivering…\n');
    const started = performance.now();
    await dispatcher.start();
    const stopDispatcher = onCleanup('dispatcher', () => dispatcher.stop());
    const deadline = Date.now() + 120_000;
    while (Object.keys(await stats(receiver.url)).length < opts.events && Date.now() < deadline)
      await sleep(50);
    const seconds = (performance.now() - started) / 1000;
    const delivered = Object.keys(await stats(receiver.url)).length;

    // Latency: one committed transaction per event at a steady rate while the dispatcher runs.
    process.stderr.write(`webhooks: latency at ${opts.latencyRate}/s for ${opts.latencySeconds} s…\n`);
    const committedAt = new Map<string, number>();
    const total = opts.latencyRate * opts.latencySeconds;
    const t0 = Date.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = t0 + (i * 1000) / opts.latencyRate;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      inflight.push(
        db
          .transaction((tx) => insertEvent(tx, orgId, 'payment', payload(opts.events + i), new Date()))
          .then((id) => {
            committedAt.set(id, Date.now());
          }),
      );
    }
    await Promise.all(inflight);
    const end = Date.now() + 30_000;
    let arrived = await stats(receiver.url);
    while ([...committedAt.keys()].some((id) => arrived[id] === undefined) && Date.now() < end) {
      await sleep(100);
      arrived = await stats(receiver.url);
    }
    await stopDispatcher.run();
    const latencies = [...committedAt]
      .map(([id, at]) => Math.max(0, (arrived[id] ?? Number.NaN) - at))
      .sort((a, b) => a - b);
    const perSecond = Math.round(delivered / seconds);
    const p50 = quantile(latencies, 0.5);
    return {
      name: 'webhooks',
      db: 'postgres',
      events: delivered,
      deliveriesPerSecond: perSecond,
      latency: {
        events: latencies.length,
        ratePerSecond: opts.latencyRate,
        p50Ms: p50,
        p99Ms: quantile(latencies, 0.99),
        maxMs: latencies.at(-1) ?? Number.NaN,
      },
      targets: { deliveriesPerSecond: 1000, p50Ms: 200 },
      meetsTargets: delivered === opts.events && perSecond >= 1000 && p50 <= 200,
      node: process.version,
      at: new Date().toISOString(),
    };
  } finally {
    await stopReceiver.run();
    await closeDb.run();
    await dropDb.run();
  }
}

export function formatWebhooks(r: WebhooksReport): string {
  return [
    `deliveries: ${r.events} in a burst → ${r.deliveriesPerSecond}/s (target ≥ ${r.targets.deliveriesPerSecond})`,
    `commit → delivery at ${r.latency.ratePerSecond}/s: p50 ${r.latency.p50Ms} ms, p99 ${r.latency.p99Ms} ms, max ${r.latency.maxMs} ms (target p50 ≤ ${r.targets.p50Ms} ms)`,
    `targets ${r.meetsTargets ? 'met' : 'MISSED'}`,
  ].join('\n');
}
