/**
 * `gateway-hang`: the real server on PostgreSQL with a sandbox gateway that never answers
 * (SANDBOX_GATEWAY_FAULTS=hang, GATEWAY_TIMEOUT_MS 30 s). A stream of Charges keeps N of them in
 * flight (each waiting on the gateway; one that ends is replaced at once) while autocannon measures
 * SaveDonor (`PUT /V1/External/SaveDonor` with the APIKey), which touches no gateway, and a prober
 * asks `/readyz` every 100 ms. A charge waiting on the gateway must hold no database connection and
 * no transaction, so the rest of the API keeps its latency.
 * Target (2 cores): SaveDonor p99 ≤ 50 ms; every /readyz answered 200.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { CHARGE_PATH, chargeBody, createBenchOrg, gatewayLimits, type Org } from './charge.ts';
import { type CpuSplit, cpuSnapshot, cpuSplit } from './cpu.ts';
import { errorText, onCleanup, type Registered, sleep } from './lifecycle.ts';
import {
  type BackendActivity,
  createBenchDatabase,
  dropBenchDatabase,
  queryOnce,
  sampleBackends,
  withDatabase,
} from './postgres.ts';
import { requestJson, type ServerHandle, serverRevision, startServer } from './server.ts';

export interface HangOptions {
  pgUrl: URL;
  /** Charges kept in flight, all hanging on the gateway. */
  charges: number;
  /** New charges per second while the stream ramps up to `charges`. */
  rampPerSecond: number;
  /** GATEWAY_TIMEOUT_MS of the server. */
  gatewayTimeoutMs: number;
  /** Measured SaveDonor seconds under the hang; and the baseline before any charge. */
  durationSeconds: number;
  baselineSeconds: number;
  /** autocannon connections for SaveDonor. */
  connections: number;
  log: (line: string) => void;
}

export interface Latencies {
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  non2xx: number;
  errors: number;
}

export interface ProbeResult {
  probes: number;
  ok: number;
  failed: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface HangReport {
  name: 'gateway-hang';
  db: 'postgres';
  gatewayTimeoutMs: number;
  gatewayLimits: { perOrg: number; perGateway: number; timeoutMs: number };
  connections: number;
  /** Charges in flight asked for; Pending payments in the database before and after the measured run. */
  chargesInFlight: number;
  pendingBefore: number;
  pendingAfter: number;
  /** Charges answered before the measured run ended (none may be: they all hang). */
  chargesAnswered: number;
  baseline: { saveDonor: Latencies; readyz: ProbeResult };
  underHang: { saveDonor: Latencies; readyz: ProbeResult };
  /** The server's connections to the bench database while the charges hang. */
  backends: BackendActivity | null;
  serverPoolSize: number;
  /** CPU per SaveDonor answered during the measured run. */
  cpu: CpuSplit | null;
  targets: { saveDonorP99Ms: number; readyzAllAnswered: true };
  meetsTargets: boolean;
  misses: string[];
  loadAverageAtStart: number[];
  node: string;
  cpus: number;
  at: string;
  /** The commit the server ran (`+changes`: with uncommitted changes under apps/ or packages/). */
  serverRevision: string | null;
}

const SAVE_DONOR_PATH = '/V1/External/SaveDonor';

function saveDonorBody(org: Org) {
  return JSON.stringify({ orgGuid: org.orgGuid, donorID: '', firstName: 'Bench', lastName: 'Donor' });
}

/** autocannon against SaveDonor (a new donor per request) for `seconds`. */
function fireSaveDonor(url: string, org: Org, connections: number, seconds: number): Promise<Latencies> {
  let guard: NodeJS.Timeout | undefined;
  let stopOnExit: Registered | undefined;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${url}${SAVE_DONOR_PATH}`,
        method: 'PUT',
        connections,
        duration: seconds,
        timeout: 10,
        headers: { 'content-type': 'application/json', apikey: org.apiKey },
        body: saveDonorBody(org),
      },
      (err, r) => {
        clearTimeout(guard);
        stopOnExit?.drop();
        if (err) return reject(err instanceof Error ? err : new Error(String(err)));
        resolve({
          requests: r['2xx'],
          perSecond: Math.round((r['2xx'] / r.duration) * 10) / 10,
          p50Ms: r.latency.p50,
          p99Ms: r.latency.p99,
          maxMs: r.latency.max,
          non2xx: r.non2xx,
          errors: r.errors,
        });
      },
    );
    guard = setTimeout(() => instance.stop(), (seconds + 30) * 1000);
    stopOnExit = onCleanup('stop autocannon', () => instance.stop());
  });
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)]!;
const ms = (n: number) => Math.round(n * 10) / 10;

/** GET /readyz every `everyMs` (one at a time, 2 s deadline each) until stopped. */
function probeReadyz(url: string, everyMs = 100) {
  const times: number[] = [];
  let failed = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t = performance.now();
      try {
        const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
        await res.arrayBuffer();
        if (res.status === 200) times.push(performance.now() - t);
        else failed++;
      } catch {
        failed++;
      }
      await sleep(Math.max(0, everyMs - (performance.now() - t)));
    }
  })();
  return {
    async stop(): Promise<ProbeResult> {
      stopped = true;
      await loop;
      const sorted = [...times].sort((a, b) => a - b);
      return {
        probes: times.length + failed,
        ok: times.length,
        failed,
        p50Ms: ms(percentile(sorted, 0.5)),
        p99Ms: ms(percentile(sorted, 0.99)),
        maxMs: ms(sorted.at(-1) ?? 0),
      };
    },
  };
}

/**
 * Keeps `target` charges in flight (each with a new uniqueTransactionId), starting at most
 * `perSecond` new ones a second; one that ends is replaced. Stopping destroys the sockets.
 */
function chargeStream(url: string, org: Org, target: number, perSecond: number, clientTimeoutMs: number) {
  const { hostname, port } = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: target + 10 });
  const tag = `hang-${randomBytes(6).toString('hex')}`;
  let seq = 0;
  let inFlight = 0;
  let answered = 0;
  const statuses = new Map<string, number>();
  let stopped = false;
  const one = () => {
    inFlight++;
    const body = JSON.stringify(chargeBody(org.orgGuid, `${tag}-${seq++}`));
    const done = (what: string) => {
      inFlight--;
      answered++;
      statuses.set(what, (statuses.get(what) ?? 0) + 1);
    };
    const req = request(
      {
        host: hostname,
        port,
        path: CHARGE_PATH,
        method: 'POST',
        agent,
        timeout: clientTimeoutMs,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: org.sourceGuid,
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => done(String(res.statusCode)));
        res.on('error', () => done('error'));
      },
    );
    req.on('timeout', () => req.destroy(new Error('client time-out')));
    req.on('error', () => {
      if (!stopped) done('error');
    });
    req.end(body);
  };
  const ticker = setInterval(
    () => {
      if (stopped) return;
      if (inFlight < target) one();
    },
    Math.max(1, Math.floor(1000 / perSecond)),
  );
  return {
    get inFlight() {
      return inFlight;
    },
    get answered() {
      return answered;
    },
    statuses: () => Object.fromEntries(statuses),
    stop() {
      stopped = true;
      clearInterval(ticker);
      agent.destroy();
    },
  };
}

async function pendingPayments(databaseUrl: string): Promise<number> {
  const [row] = await queryOnce<{ n: number }>(
    databaseUrl,
    "SELECT count(*)::int AS n FROM payments WHERE status = 'Pending'",
  );
  return Number(row?.n ?? 0);
}

async function measureWindow(server: ServerHandle, org: Org, opts: HangOptions, seconds: number) {
  const probe = probeReadyz(server.url);
  try {
    const saveDonor = await fireSaveDonor(server.url, org, opts.connections, seconds);
    return { saveDonor, readyz: await probe.stop() };
  } catch (err) {
    await probe.stop();
    throw err;
  }
}

export async function runGatewayHang(opts: HangOptions): Promise<HangReport> {
  const { log } = opts;
  const at = new Date().toISOString();
  const revision = serverRevision();
  const loadAverageAtStart = loadavg().map((n) => Math.round(n * 100) / 100);
  if (loadAverageAtStart[0]! > availableParallelism() / 2)
    log(`note: the machine is already busy (load average ${loadAverageAtStart.join(', ')})`);
  const work = await mkdtemp(join(tmpdir(), 'kupah-bench-hang-'));
  onCleanup(`remove ${work}`, () => rm(work, { recursive: true, force: true }));
  const database = await createBenchDatabase(opts.pgUrl);
  onCleanup(`drop database ${database}`, () => dropBenchDatabase(opts.pgUrl, database));
  const databaseUrl = withDatabase(opts.pgUrl, database);
  const adminToken = `bench_${randomBytes(16).toString('hex')}`;
  const limits = { ...gatewayLimits(), timeoutMs: opts.gatewayTimeoutMs };
  const poolSize = Number(process.env.DB_POOL_SIZE || 20);

  log(`starting the server on PostgreSQL: every gateway call hangs (time-out ${opts.gatewayTimeoutMs} ms)`);
  const server = await startServer({
    env: {
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ADMIN_TOKEN: adminToken,
      DATA_DIR: join(work, 'server'),
      DATABASE_URL: databaseUrl,
      SANDBOX_GATEWAY_FAULTS: 'hang',
      SANDBOX_GATEWAY_LATENCY_MS: '0',
      GATEWAY_TIMEOUT_MS: String(opts.gatewayTimeoutMs),
    },
    cpuProfDir: process.env.KUPAH_BENCH_CPU_PROF,
  });
  const serverCleanup = onCleanup('stop server', () => server.stop());

  try {
    const org = await createBenchOrg(server.adminUrl, adminToken);
    const sample = await requestJson<{ donorId?: string }>(`${server.url}${SAVE_DONOR_PATH}`, {
      method: 'PUT',
      headers: { apikey: org.apiKey },
      body: JSON.parse(saveDonorBody(org)),
    });
    if (sample.status !== 200 || typeof sample.body.donorId !== 'string')
      throw new Error(`sample SaveDonor answered ${sample.status}: ${JSON.stringify(sample.body)}`);

    log(`warm-up 5 s, then baseline ${opts.baselineSeconds} s: SaveDonor with nothing else running`);
    await fireSaveDonor(server.url, org, opts.connections, 5);
    const baseline = await measureWindow(server, org, opts, opts.baselineSeconds);

    log(`starting ${opts.charges} charges (${opts.rampPerSecond}/s), every one hanging on the gateway`);
    const stream = chargeStream(
      server.url,
      org,
      opts.charges,
      opts.rampPerSecond,
      opts.gatewayTimeoutMs + 15_000,
    );
    const streamCleanup = onCleanup('stop the charge stream', () => stream.stop());
    let pendingBefore = 0;
    const deadline = Date.now() + 20_000 + (opts.charges / opts.rampPerSecond) * 1000;
    while (Date.now() < deadline) {
      pendingBefore = await pendingPayments(databaseUrl);
      if (pendingBefore >= opts.charges) break;
      await sleep(200);
    }
    if (pendingBefore < opts.charges)
      throw new Error(
        `only ${pendingBefore} of ${opts.charges} charges were claimed (Pending) in time; ${stream.answered} answered: ${JSON.stringify(stream.statuses())}`,
      );
    log(`${pendingBefore} payments Pending; measuring SaveDonor for ${opts.durationSeconds} s`);
    const sampler = sampleBackends(opts.pgUrl, database);
    const cpuBefore = cpuSnapshot(server.pid, database);
    const underHang = await measureWindow(server, org, opts, opts.durationSeconds).catch(
      async (err: unknown) => {
        await sampler.stop();
        throw err;
      },
    );
    const cpu = cpuSplit(cpuBefore, cpuSnapshot(server.pid, database), underHang.saveDonor.requests);
    const backends = await sampler.stop();
    const pendingAfter = await pendingPayments(databaseUrl);
    const chargesAnswered = stream.answered;
    const statuses = stream.statuses();
    await streamCleanup.run();

    const target = 50;
    const misses: string[] = [];
    const u = underHang;
    if (u.saveDonor.p99Ms > target) misses.push(`SaveDonor p99 ${u.saveDonor.p99Ms} ms > ${target} ms`);
    if (u.saveDonor.non2xx > 0 || u.saveDonor.errors > 0)
      misses.push(`SaveDonor: ${u.saveDonor.non2xx} non-2xx, ${u.saveDonor.errors} errors`);
    if (u.readyz.failed > 0 || u.readyz.ok === 0)
      misses.push(`/readyz: ${u.readyz.failed} of ${u.readyz.probes} probes not answered 200`);
    // The scenario itself: every charge must still be hanging when the measurement ends.
    if (chargesAnswered > 0)
      misses.push(`${chargesAnswered} charges were answered during the run: ${JSON.stringify(statuses)}`);
    if (pendingAfter < opts.charges)
      misses.push(`only ${pendingAfter} payments still Pending at the end (${opts.charges} expected)`);

    return {
      name: 'gateway-hang',
      db: 'postgres',
      gatewayTimeoutMs: opts.gatewayTimeoutMs,
      gatewayLimits: limits,
      connections: opts.connections,
      chargesInFlight: opts.charges,
      pendingBefore,
      pendingAfter,
      chargesAnswered,
      baseline,
      underHang,
      backends,
      serverPoolSize: poolSize,
      cpu,
      targets: { saveDonorP99Ms: target, readyzAllAnswered: true },
      meetsTargets: misses.length === 0,
      misses,
      loadAverageAtStart,
      node: process.version,
      cpus: availableParallelism(),
      at,
      serverRevision: revision,
    };
  } catch (err) {
    const tail = server.logTail();
    throw new Error(`${errorText(err)}${tail ? `\nserver log (last lines):\n${tail}` : ''}`);
  } finally {
    await serverCleanup.run();
  }
}

export function formatGatewayHang(r: HangReport): string {
  const line = (l: Latencies) =>
    `${l.perSecond}/s, p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms, max ${l.maxMs} ms, non-2xx ${l.non2xx}, errors ${l.errors}`;
  const probe = (p: ProbeResult) =>
    `${p.ok}/${p.probes} answered 200, p50 ${p.p50Ms} ms, p99 ${p.p99Ms} ms, max ${p.maxMs} ms`;
  const met = (ok: boolean) => (ok ? 'met' : 'MISSED');
  return [
    `gateway-hang on postgres: every gateway call hangs (time-out ${r.gatewayTimeoutMs} ms), ${r.chargesInFlight} charges in flight`,
    `  Pending payments   ${r.pendingBefore} before, ${r.pendingAfter} after; charges answered during the run: ${r.chargesAnswered}`,
    `  baseline  SaveDonor  ${line(r.baseline.saveDonor)}`,
    `            /readyz    ${probe(r.baseline.readyz)}`,
    `  hanging   SaveDonor  ${line(r.underHang.saveDonor)}   (p99 target ≤ ${r.targets.saveDonorP99Ms} ms: ${met(r.underHang.saveDonor.p99Ms <= r.targets.saveDonorP99Ms)})`,
    `            /readyz    ${probe(r.underHang.readyz)}   (target: all answered: ${met(r.underHang.readyz.failed === 0 && r.underHang.readyz.ok > 0)})`,
    r.backends === null
      ? null
      : `  server DB conns    busy mean ${r.backends.busyMean}, max ${r.backends.busyMax}; open at most ${r.backends.openMax} (pool ${r.serverPoolSize})`,
    r.cpu === null
      ? null
      : `  CPU ms per SaveDonor  server ${r.cpu.msPerOp.server}, load generator ${r.cpu.msPerOp.loadGenerator}, postgres ${r.cpu.msPerOp.postgres}, other ${r.cpu.msPerOp.other} (machine ${r.cpu.machineBusyPercent}% busy)`,
    `  SaveDonor over ${r.connections} connections; server at ${r.serverRevision ?? 'an unknown revision'}; node ${r.node}, ${r.cpus} CPUs, load average at start ${r.loadAverageAtStart.join(' ')}`,
    r.meetsTargets ? 'all targets met' : `targets missed: ${r.misses.join('; ')}`,
  ]
    .filter((l) => l !== null)
    .join('\n');
}
