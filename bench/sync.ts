/**
 * `npm run bench -- sync`: N payments queued offline in the terminal's real data layer (Dexie on
 * Chromium's IndexedDB, card data sealed) and then forwarded to the real server on PostgreSQL by
 * the sync loop. Reports payments committed per second and the total forwarding time; also the
 * median enqueue time (validate, seal, write) in the browser. `gatewayLatencyMs` makes every sandbox
 * gateway call of the server take that long (SANDBOX_GATEWAY_LATENCY_MS).
 * Targets (2 cores): all 10,000 committed in ≤ 10 s with an instant gateway, ≤ 20 s with one taking
 * 300 ms (scaled by the number of payments).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium, requireChromium } from '@kupah/browser-testing';
import { build } from 'vite';
import { type CpuSplit, cpuSnapshot, cpuSplit } from './cpu.ts';
import { onCleanup } from './lifecycle.ts';
import { createBenchDatabase, dropBenchDatabase, queryOnce, withDatabase } from './postgres.ts';
import { benchDevice, metricSum, serverRevision, startServer } from './server.ts';

export interface SyncOptions {
  pgUrl: URL;
  payments: number;
  /** Time every sandbox gateway call takes (the server's SANDBOX_GATEWAY_LATENCY_MS), ms. */
  gatewayLatencyMs: number;
  log: (line: string) => void;
}

/**
 * Seconds to forward 10,000 payments: 10 with an instant gateway, 20 with a 300 ms one (and for any
 * latency up to 300 ms); no target above 300 ms.
 */
export function syncTargetSeconds(gatewayLatencyMs: number): number | null {
  if (gatewayLatencyMs === 0) return 10;
  return gatewayLatencyMs <= 300 ? 20 : null;
}

export interface SyncReport {
  name: 'sync';
  db: 'postgres';
  gatewayLatencyMs: number;
  payments: number;
  committed: number;
  forwardSeconds: number;
  paymentsPerSecond: number;
  /** Pushes the server answered (its request-duration histogram's count). */
  pushes: number;
  /**
   * Time the server spent answering pushes, summed over pushes (its request-duration histogram);
   * pushes are pipelined, so this can exceed the forwarding time.
   */
  serverPushSeconds: number;
  enqueue: { medianMs: number; p95Ms: number };
  /**
   * CPU per committed payment while forwarding (Linux): the server, PostgreSQL, this process,
   * `children` (Chromium: the terminal's side), and `other` (anything else running on the machine).
   */
  cpu: CpuSplit | null;
  /** Machine load average (1, 5, 15 min) when forwarding started. */
  loadAverageAtStart: number[];
  /** Seconds for 10,000 payments (null: no target at this latency); scaled by payments ÷ 10,000. */
  targets: { forwardSeconds: number | null };
  meetsTargets: boolean;
  browser: string;
  node: string;
  at: string;
  /** The commit the server ran (`+changes`: with uncommitted changes under apps/ or packages/). */
  serverRevision: string | null;
}

/** What the bench page puts on its global object (bench/pages/sync-page.ts), as the driver sees it. */
interface BenchData {
  pair(url: string, code: string, name: string): Promise<unknown>;
  enqueue(entry: unknown): Promise<unknown>;
  syncNow(): Promise<void>;
  summary(): Promise<{ pending: number }>;
}
interface BenchGlobals {
  kupahBench: { createTerminalData(opts: { bridge: unknown; dbName: string }): BenchData; bridge: unknown };
  data: BenchData;
}

const ADMIN = `bench-sync-admin-${Date.now()}-0123456789`;
const PAGE = `<!doctype html><meta charset="utf-8"><title>loading</title><script type="module" src="/sync-page.js"></script>`;

async function bundlePage(): Promise<{ dir: string; js: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kupah-bench-sync-'));
  const entry = fileURLToPath(new URL('./pages/sync-page.ts', import.meta.url));
  await build({
    configFile: false,
    logLevel: 'warn',
    build: {
      lib: { entry, formats: ['es'], fileName: () => 'sync-page.js' },
      outDir: dir,
      emptyOutDir: true,
      target: 'chrome120',
    },
  });
  return { dir, js: await readFile(join(dir, 'sync-page.js'), 'utf8') };
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? 0;
};

export async function runSync(opts: SyncOptions): Promise<SyncReport> {
  requireChromium();
  const { log } = opts;
  const revision = serverRevision();
  log('bundling the data layer for the browser');
  const page = await bundlePage();
  onCleanup('bundle dir', () => rm(page.dir, { recursive: true, force: true }));
  const http = createServer((req, res) => {
    if (req.url === '/sync-page.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(page.js);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  onCleanup('page server', () => new Promise<void>((r) => http.close(() => r())));
  const pageUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/`;

  const database = await createBenchDatabase(opts.pgUrl);
  onCleanup(`drop database ${database}`, () => dropBenchDatabase(opts.pgUrl, database));
  const dbUrl = withDatabase(opts.pgUrl, database);
  const dataDir = await mkdtemp(join(tmpdir(), 'kupah-bench-sync-data-'));
  onCleanup('data dir', () => rm(dataDir, { recursive: true, force: true }));
  log(`starting the server on PostgreSQL (gateway ${opts.gatewayLatencyMs} ms per call)`);
  const server = await startServer({
    env: {
      DATABASE_URL: dbUrl,
      ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      SCHEDULER: '0',
      SANDBOX_GATEWAY_LATENCY_MS: String(opts.gatewayLatencyMs),
      SANDBOX_GATEWAY_FAULTS: undefined,
    },
    cpuProfDir: process.env.KUPAH_BENCH_CPU_PROF,
  });
  onCleanup('server', () => server.stop());
  const pairingCode = await benchDevice(server.adminUrl, ADMIN, 'Bench kiosk');

  const chromium = await launchChromium();
  onCleanup('chromium', () => chromium.close());
  const tab = await chromium.browser.newPage();
  await tab.goto(pageUrl);
  await tab.waitForFunction(
    () => (globalThis as unknown as { document: { title: string } }).document.title === 'ready',
  );
  const browser = chromium.browser.browser()?.version() ?? 'chromium';

  log('pairing');
  await tab.evaluate(
    async ([url, code]) => {
      const g = globalThis as unknown as BenchGlobals;
      g.data = g.kupahBench.createTerminalData({ bridge: g.kupahBench.bridge, dbName: 'bench-sync' });
      await g.data.pair(url, code, 'Bench kiosk');
    },
    [server.url, pairingCode] as const,
  );

  log(`queueing ${opts.payments} card payments in IndexedDB (validate, seal, write)`);
  const times: number[] = [];
  for (let done = 0; done < opts.payments; ) {
    const n = Math.min(500, opts.payments - done);
    const chunk = await tab.evaluate(
      async ([from, count]) => {
        const g = globalThis as unknown as BenchGlobals;
        const out: number[] = [];
        for (let i = from; i < from + count; i++) {
          const t = performance.now();
          await g.data.enqueue({
            kind: 'charge',
            request: {
              amount: 18 + (i % 100),
              currency: 'USD',
              paymentMethodId: 'Credit_Card',
              card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
            },
          });
          out.push(performance.now() - t);
        }
        return out;
      },
      [done, n] as const,
    );
    times.push(...chunk);
    done += n;
  }

  log('forwarding');
  const loadAverageAtStart = loadavg().map((n) => Math.round(n * 100) / 100);
  const cpuBefore = cpuSnapshot(server.pid, database);
  const forward = await tab.evaluate(async () => {
    const g = globalThis as unknown as BenchGlobals;
    const t0 = performance.now();
    let runs = 0;
    for (;;) {
      await g.data.syncNow();
      runs++;
      if ((await g.data.summary()).pending === 0 || runs > 1000) break;
    }
    return { ms: performance.now() - t0, runs };
  });
  const cpuAfter = cpuSnapshot(server.pid, database);
  const pushRoute = { route: '/v1/Device/Sync/Push' };
  const pushSeconds = await metricSum(server.adminUrl, 'kupah_http_request_duration_seconds_sum', pushRoute);
  const pushes = await metricSum(server.adminUrl, 'kupah_http_request_duration_seconds_count', pushRoute);
  const [row] = await queryOnce<{ n: string }>(
    dbUrl,
    "SELECT count(*) AS n FROM payments WHERE status = 'Success'",
  );
  const committed = Number(row?.n ?? 0);
  const forwardSeconds = forward.ms / 1000;
  const cpu = cpuSplit(cpuBefore, cpuAfter, committed);
  const target = syncTargetSeconds(opts.gatewayLatencyMs);
  return {
    name: 'sync',
    db: 'postgres',
    gatewayLatencyMs: opts.gatewayLatencyMs,
    payments: opts.payments,
    committed,
    forwardSeconds: Math.round(forwardSeconds * 100) / 100,
    paymentsPerSecond: Math.round(committed / forwardSeconds),
    pushes,
    serverPushSeconds: Math.round(pushSeconds * 100) / 100,
    enqueue: {
      medianMs: Math.round(percentile(times, 0.5) * 100) / 100,
      p95Ms: Math.round(percentile(times, 0.95) * 100) / 100,
    },
    cpu,
    loadAverageAtStart,
    targets: { forwardSeconds: target },
    meetsTargets:
      committed === opts.payments && (target === null || forwardSeconds <= target * (opts.payments / 10_000)),
    browser,
    node: process.version,
    at: new Date().toISOString(),
    serverRevision: revision,
  };
}

export function formatSync(r: SyncReport): string {
  return [
    `sync: ${r.committed}/${r.payments} payments forwarded from Chromium (Dexie) to the server on PostgreSQL (gateway ${r.gatewayLatencyMs} ms per call)`,
    `  forwarding: ${r.forwardSeconds} s, ${r.paymentsPerSecond} payments committed/s (target: ${r.targets.forwardSeconds === null ? 'none at this latency' : `10,000 in ≤ ${r.targets.forwardSeconds} s`})`,
    `  the server answering ${r.pushes} pushes: ${r.serverPushSeconds} s summed over pushes (they overlap: pipelined)`,
    `  enqueue in the browser (validate, seal, write): median ${r.enqueue.medianMs} ms, p95 ${r.enqueue.p95Ms} ms`,
    r.cpu === null
      ? null
      : `  CPU ms per payment forwarded: server ${r.cpu.msPerOp.server}, postgres ${r.cpu.msPerOp.postgres}, Chromium ${r.cpu.msPerOp.children}, other ${r.cpu.msPerOp.other} (machine ${r.cpu.machineBusyPercent}% busy)`,
    `  ${r.meetsTargets ? 'meets the target' : 'MISSES the target'}; server at ${r.serverRevision ?? 'an unknown revision'}; ${r.browser}, node ${r.node}`,
  ]
    .filter((l) => l !== null)
    .join('\n');
}
