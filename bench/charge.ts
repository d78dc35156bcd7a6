/**
 * `charge`: the real HTTP server under autocannon, one unique uniqueTransactionId per request,
 * against a fresh database; then, on the same database kind and driver, the rate of bare
 * single-row INSERT commits (the durable-write limit) and the ratio between the two.
 * `gatewayLatencyMs` makes the server's sandbox gateway take that long per call
 * (SANDBOX_GATEWAY_LATENCY_MS), as a real card authorisation does.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import autocannon from 'autocannon';
import { type CpuSplit, cpuSnapshot, cpuSplit } from './cpu.ts';
import { type InsertResult, measurePgInserts, measurePgliteInserts } from './inserts.ts';
import { errorText, onCleanup, type Registered, sleep, withTimeout } from './lifecycle.ts';
import {
  type BackendActivity,
  countersPer,
  createBenchDatabase,
  type DbCounters,
  dbCounters,
  dropBenchDatabase,
  loopbackPgUrl,
  queryOnce,
  sampleBackends,
  withDatabase,
} from './postgres.ts';
import { metricSum, requestJson, type ServerHandle, serverRevision, startServer } from './server.ts';

export type DbKind = 'pglite' | 'postgres';

export interface ChargeOptions {
  db: DbKind;
  durationSeconds: number;
  connections: number;
  /** Whether `connections` came from --connections or was chosen for the gateway latency. */
  connectionsChosenBy: 'option' | 'default';
  /** Time every sandbox gateway call takes (SANDBOX_GATEWAY_LATENCY_MS of the server), ms. */
  gatewayLatencyMs: number;
  warmupSeconds: number;
  insertSeconds: number;
  /** Admin URL of the loopback PostgreSQL (database `postgres`); the bench database is created beside it. */
  pgUrl: string;
  /** When set, the server writes a V8 CPU profile (node --cpu-prof) into this directory. */
  cpuProfDir?: string | undefined;
  /** Progress lines (stderr). */
  log: (line: string) => void;
}

export interface Targets {
  chargesPerSecond: number;
  p99Ms: number | null;
  ratio: number | null;
}

/** The issue's targets on the reference 2-core machine, with an instant gateway. */
export const TARGETS: Record<DbKind, Targets> = {
  postgres: { chargesPerSecond: 1000, p99Ms: 50, ratio: 0.5 },
  pglite: { chargesPerSecond: 300, p99Ms: null, ratio: null },
};

/**
 * Targets with a gateway that takes `latencyMs`: the same charges/s; on PostgreSQL p99 ≤ 600 ms
 * for a 300 ms gateway (twice the gateway's time, at least the instant gateway's 50 ms, for other
 * latencies); no ratio target (a charge then waits on the gateway, not on the database).
 */
export function targetsFor(db: DbKind, latencyMs: number): Targets {
  const base = TARGETS[db];
  if (latencyMs === 0) return base;
  return {
    chargesPerSecond: base.chargesPerSecond,
    p99Ms: base.p99Ms === null ? null : Math.max(base.p99Ms, 2 * latencyMs),
    ratio: null,
  };
}

/** With an instant gateway 10 connections saturate the server on 2 cores (docs/benchmarks.md). */
export const INSTANT_CONNECTIONS = 10;
/** Closed-loop headroom over Little's law (see defaultConnections). */
const HEADROOM = 1.25;

/**
 * Connections when --connections is not given. autocannon is a closed loop: each connection has
 * one request in flight, so throughput = connections ÷ latency (Little's law). To offer the target
 * rate through a gateway taking `latencyMs`, it needs target × latency requests waiting on the
 * gateway (1,000/s × 0.3 s = 300), plus the 10 that keep the server itself busy, plus 25 % so the
 * target is not the most the load generator can offer (the server's own time per charge grows
 * under load): 10 + ⌈1.25 × 1,000 × 0.3⌉ = 385 on PostgreSQL with a 300 ms gateway.
 */
export function defaultConnections(db: DbKind, latencyMs: number): number {
  if (latencyMs === 0) return INSTANT_CONNECTIONS;
  return INSTANT_CONNECTIONS + Math.ceil((HEADROOM * TARGETS[db].chargesPerSecond * latencyMs) / 1000);
}

/** The server's gateway call limits (config.ts defaults unless set in the environment it inherits). */
export function gatewayLimits(env: NodeJS.ProcessEnv = process.env) {
  const num = (v: string | undefined, d: number) => (v?.trim() && Number.isFinite(Number(v)) ? Number(v) : d);
  return {
    perOrg: num(env.GATEWAY_CONCURRENCY_PER_ORG, 256),
    perGateway: num(env.GATEWAY_CONCURRENCY, 1024),
    timeoutMs: num(env.GATEWAY_TIMEOUT_MS, 30_000),
  };
}

export interface ChargeReport {
  name: 'charge';
  db: DbKind;
  durationSeconds: number;
  connections: number;
  connectionsChosenBy: 'option' | 'default';
  /** SANDBOX_GATEWAY_LATENCY_MS the server ran with. */
  gatewayLatencyMs: number;
  /**
   * The server's gateway limits; with a gateway latency, one organisation (the benchmark uses one)
   * can get at most perOrg ÷ latency charges/s through them (`gatewayCeilingPerSecond`).
   */
  gatewayLimits: { perOrg: number; perGateway: number; timeoutMs: number };
  gatewayCeilingPerSecond: number | null;
  /** PostgreSQL: the server's connections to the bench database during the measured run. */
  backends: BackendActivity | null;
  /**
   * PostgreSQL: statistics counters per payment over the server's whole life (sample, warm-up and
   * measured charges; read after it stopped): commits, rows, and per table scans and writes.
   */
  dbPerPayment: DbCounters | null;
  chargesPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  insertCommitsPerSecond: number;
  ratio: number;
  targets: Targets;
  /** Every target met, no non-2xx, no errors, and the payment and insert counts check out. */
  meetsTargets: boolean;
  node: string;
  cpus: number;
  at: string;
  /** The commit the server ran (`+changes`: with uncommitted changes under apps/ or packages/). */
  serverRevision: string | null;
  /** What was missed, in words (empty when meetsTargets). */
  misses: string[];
  latencyMs: { mean: number; p90: number; p99_9: number; max: number };
  /** Machine load average (1, 5, 15 min) when the run started: other work skews the figures. */
  loadAverageAtStart: number[];
  /** CPU use during the measured run (Linux only): who spent how many CPU ms per charge. */
  cpu: CpuSplit | null;
  timeouts: number;
  warmupSeconds: number;
  /** DB_POOL_SIZE the server ran with (PostgreSQL only). */
  serverPoolSize: number | null;
  /** 2xx answers in the measured run, and how many of those said paymentStatus Success. */
  responses2xx: number;
  successResponses: number;
  /** Requests sent that got no answer before the run ended (cut off in flight at the end). */
  unanswered: number;
  /** Payments written during the measured run (PostgreSQL: counted in the database; PGlite: server metric). */
  paymentsRecorded: number;
  paymentsRecordedBy: 'database' | 'metrics';
  /** Over the whole run: rows in `payments` (PGlite: re-opened after shutdown) vs the server's counter. */
  paymentsInDatabase: number;
  paymentsCountedByServer: number;
  /**
   * 2xx ≤ paymentsRecorded ≤ 2xx + unanswered (requests cut off at the end still commit), every 2xx
   * said Success, and paymentsInDatabase = paymentsCountedByServer.
   */
  paymentsMatch: boolean;
  insert: {
    clients: number;
    seconds: number;
    commits: number;
    rowsMatch: boolean;
    cpu: CpuSplit | null;
  };
}

export interface Org {
  orgGuid: string;
  apiKey: string;
  sourceGuid: string;
}

export const CHARGE_PATH = '/v1/External/Charge';

export function chargeBody(orgGuid: string, uniqueTransactionId: string) {
  return {
    orgGUID: orgGuid,
    amount: 18,
    paymentMethodId: 'Credit_Card',
    uniqueTransactionId,
    currency: 'USD',
    card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
  };
}

export async function createBenchOrg(url: string, adminToken: string): Promise<Org> {
  const auth = { authorization: `Bearer ${adminToken}` };
  const created = await requestJson<Org>(`${url}/admin/orgs`, {
    method: 'POST',
    headers: auth,
    body: { name: 'Bench' },
  });
  if (created.status !== 201 || typeof created.body.sourceGuid !== 'string')
    throw new Error(`POST /admin/orgs answered ${created.status}: ${JSON.stringify(created.body)}`);
  // 100,000/s is the most the settings schema accepts; with a burst of 1,000,000 it never bites.
  const patched = await requestJson(`${url}/admin/orgs/${created.body.orgGuid}/settings`, {
    method: 'PATCH',
    headers: auth,
    body: { rateLimit: { perSecond: 100_000, burst: 1_000_000 } },
  });
  if (patched.status !== 200)
    throw new Error(`PATCH settings answered ${patched.status}: ${JSON.stringify(patched.body)}`);
  return created.body;
}

async function sampleCharge(url: string, org: Org, id: string): Promise<void> {
  const res = await requestJson<{ paymentStatus?: string }>(`${url}${CHARGE_PATH}`, {
    method: 'POST',
    headers: { authorization: org.sourceGuid },
    body: chargeBody(org.orgGuid, id),
  });
  if (res.status !== 200 || res.body.paymentStatus !== 'Success')
    throw new Error(`sample charge answered ${res.status}: ${JSON.stringify(res.body)}`);
}

interface Fired {
  result: autocannon.Result;
  successResponses: number;
}

/** autocannon against Charge for `seconds`, every request with a new uniqueTransactionId. */
function fire(url: string, org: Org, connections: number, seconds: number, tag: string): Promise<Fired> {
  let seq = 0;
  let successResponses = 0;
  let guard: NodeJS.Timeout | undefined;
  let stopOnExit: Registered | undefined;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${url}${CHARGE_PATH}`,
        method: 'POST',
        connections,
        duration: seconds,
        timeout: 10,
        headers: { 'content-type': 'application/json', authorization: org.sourceGuid },
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              body: JSON.stringify(chargeBody(org.orgGuid, `${tag}-${seq++}`)),
            }),
            onResponse: (status, body) => {
              if (status === 200 && body.includes('"paymentStatus":"Success"')) successResponses++;
            },
          },
        ],
      },
      (err, result) => {
        clearTimeout(guard);
        stopOnExit?.drop();
        if (err) reject(err instanceof Error ? err : new Error(String(err)));
        else resolve({ result, successResponses });
      },
    );
    guard = setTimeout(() => instance.stop(), (seconds + 30) * 1000);
    // On SIGINT, stop sending before the server is asked to drain.
    stopOnExit = onCleanup('stop autocannon', () => instance.stop());
  });
}

/** A payment count, and how many of those payments still wait for their gateway outcome. */
interface Count {
  n: number;
  pending: number;
}

/**
 * Reads `count` until two reads `gapMs` apart agree and none is pending (requests cut off in
 * flight have finished, their gateway calls included).
 */
async function settled(count: () => Promise<Count>, gapMs: number): Promise<number> {
  let last = await count();
  const deadline = Date.now() + 15_000 + gapMs * 5;
  while (Date.now() < deadline) {
    await sleep(gapMs);
    const now = await count();
    if (now.n === last.n && now.pending === 0) return now.n;
    last = now;
  }
  return last.n;
}

/** Org, sample charge, warm-up and the measured run against a started server. */
async function measureHttp(
  server: ServerHandle,
  opts: ChargeOptions,
  adminToken: string,
  databaseUrl: string | undefined,
  backendsOf: (() => ReturnType<typeof sampleBackends>) | undefined,
) {
  const { log } = opts;
  const org = await createBenchOrg(server.adminUrl, adminToken);
  const tag = `bench-${randomBytes(6).toString('hex')}`;
  await sampleCharge(server.url, org, `${tag}-sample`);
  log('sample charge: 200, paymentStatus Success');

  const serverCount = () => metricSum(server.adminUrl, 'kupah_payments_total');
  // PGlite: the server's counter only counts outcomes recorded, so a gap longer than a gateway call
  // is what shows nothing is still in flight.
  const liveCount: () => Promise<Count> =
    databaseUrl === undefined
      ? async () => ({ n: await serverCount(), pending: 0 })
      : () => countPayments(databaseUrl, org.orgGuid);
  const gapMs = 300 + opts.gatewayLatencyMs;

  if (opts.warmupSeconds > 0) {
    log(`warm-up: ${opts.warmupSeconds} s, ${opts.connections} connections`);
    await fire(server.url, org, opts.connections, opts.warmupSeconds, `${tag}-w`);
  }
  const before = await settled(liveCount, gapMs);
  log(`measuring: ${opts.durationSeconds} s, ${opts.connections} connections`);
  const sampler = backendsOf?.();
  const database = databaseUrl && decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const cpuBefore = cpuSnapshot(server.pid, database);
  const { result, successResponses } = await fire(
    server.url,
    org,
    opts.connections,
    opts.durationSeconds,
    `${tag}-m`,
  ).catch(async (err: unknown) => {
    await sampler?.stop();
    throw err;
  });
  const cpu = cpuSplit(cpuBefore, cpuSnapshot(server.pid, database), result['2xx']);
  const backends = (await sampler?.stop()) ?? null;
  const after = await settled(liveCount, gapMs);
  const countedByServer = await serverCount();
  return {
    org,
    result,
    successResponses,
    cpu,
    backends,
    before,
    after,
    countedByServer,
    logTail: server.logTail(),
  };
}

const COUNT_PAYMENTS = `SELECT count(*)::int AS n, count(*) FILTER (WHERE p.status = 'Pending')::int AS pending
  FROM payments p JOIN orgs o ON o.id = p.org_id WHERE o.guid = $1`;

async function countPayments(databaseUrl: string, orgGuid: string): Promise<Count> {
  // Untracked: the benchmark's own counting must not show in the server's table statistics.
  const rows = await queryOnce<Count>(databaseUrl, COUNT_PAYMENTS, [orgGuid], { untracked: true });
  return { n: Number(rows[0]!.n), pending: Number(rows[0]!.pending) };
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

export async function runCharge(opts: ChargeOptions): Promise<ChargeReport> {
  const { log } = opts;
  const at = new Date().toISOString();
  const loadAverageAtStart = loadavg().map((n) => Math.round(n * 100) / 100);
  if (loadAverageAtStart[0]! > availableParallelism() / 2)
    log(
      `note: the machine is already busy (load average ${loadAverageAtStart.join(', ')}); figures will be lower`,
    );
  const revision = serverRevision();
  const work = await mkdtemp(join(tmpdir(), 'kupah-bench-'));
  onCleanup(`remove ${work}`, () => rm(work, { recursive: true, force: true }));
  const serverDir = join(work, 'server');
  const adminToken = `bench_${randomBytes(16).toString('hex')}`;

  let databaseUrl: string | undefined;
  let backendsOf: (() => ReturnType<typeof sampleBackends>) | undefined;
  if (opts.db === 'postgres') {
    const adminUrl = loopbackPgUrl(opts.pgUrl);
    const name = await withTimeout(createBenchDatabase(adminUrl), 30_000, 'CREATE DATABASE');
    onCleanup(`drop database ${name}`, () => dropBenchDatabase(adminUrl, name));
    databaseUrl = withDatabase(adminUrl, name);
    backendsOf = () => sampleBackends(adminUrl, name);
    log(`database ${name} created`);
  }
  const limits = gatewayLimits();
  const ceiling =
    opts.gatewayLatencyMs > 0 ? Math.round(limits.perOrg / (opts.gatewayLatencyMs / 1000)) : null;
  if (ceiling !== null && ceiling < targetsFor(opts.db, opts.gatewayLatencyMs).chargesPerSecond)
    log(
      `note: GATEWAY_CONCURRENCY_PER_ORG ${limits.perOrg} lets the one bench organisation make at most ` +
        `${limits.perOrg} ÷ ${opts.gatewayLatencyMs / 1000} s = ${ceiling} charges/s through a ${opts.gatewayLatencyMs} ms gateway`,
    );

  const server: ServerHandle = await startServer({
    env: {
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ADMIN_TOKEN: adminToken,
      DATA_DIR: serverDir,
      DATABASE_URL: databaseUrl,
      SANDBOX_GATEWAY_LATENCY_MS: String(opts.gatewayLatencyMs),
      // A healthy gateway: an inherited fault profile would make the counts meaningless.
      SANDBOX_GATEWAY_FAULTS: undefined,
    },
    cpuProfDir: opts.cpuProfDir,
  });
  const serverCleanup = onCleanup('stop server', () => server.stop());
  const countersBefore = databaseUrl === undefined ? null : await dbCounters(databaseUrl);
  log(
    `server ready at ${server.url} (pid ${server.pid}, ${opts.db}, gateway ${opts.gatewayLatencyMs} ms per call)`,
  );

  const measured = await (async () => {
    try {
      return await measureHttp(server, opts, adminToken, databaseUrl, backendsOf);
    } catch (err) {
      const tail = server.logTail();
      throw new Error(`${errorText(err)}${tail ? `\nserver log (last lines):\n${tail}` : ''}`);
    }
  })();
  const { org, result, successResponses, cpu, backends, before, after, countedByServer, logTail } = measured;
  await serverCleanup.run();

  let inDatabase: number;
  let dbPerPayment: DbCounters | null = null;
  if (opts.db === 'postgres') {
    inDatabase = (await countPayments(databaseUrl!, org.orgGuid)).n;
    if (countersBefore && inDatabase > 0)
      dbPerPayment = countersPer(countersBefore, await dbCounters(databaseUrl!), inDatabase);
  } else {
    // Re-open the server's data directory after its shutdown: what it answered must be on disk.
    const reopened = new PGlite(serverDir);
    try {
      await withTimeout(reopened.waitReady, 60_000, 'reopening PGlite');
      const rows = await reopened.query<Count>(COUNT_PAYMENTS, [org.orgGuid]);
      inDatabase = Number(rows.rows[0]!.n);
    } finally {
      await reopened.close();
    }
  }

  // As many clients as connections, but no more than the server's pool: the server never has more
  // statements in flight than that, however many requests wait on the gateway.
  const poolSize = Number(process.env.DB_POOL_SIZE || 20);
  const insertClients = Math.min(opts.connections, poolSize);
  log(`insert commits: ${opts.insertSeconds} s, ${insertClients} clients`);
  const insert: InsertResult =
    opts.db === 'postgres'
      ? await measurePgInserts(databaseUrl!, insertClients, opts.insertSeconds)
      : await measurePgliteInserts(join(work, 'inserts'), insertClients, opts.insertSeconds);

  const answered = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
  const unanswered = Math.max(0, result.requests.sent - answered);
  const recorded = after - before;
  const chargesPerSecond = result['2xx'] / result.duration;
  const ratio = insert.commitsPerSecond > 0 ? chargesPerSecond / insert.commitsPerSecond : 0;
  const paymentsMatch =
    recorded >= result['2xx'] &&
    recorded <= result['2xx'] + unanswered &&
    successResponses === result['2xx'] &&
    inDatabase === countedByServer;

  const targets = targetsFor(opts.db, opts.gatewayLatencyMs);
  const misses: string[] = [];
  if (chargesPerSecond < targets.chargesPerSecond)
    misses.push(`charges/s ${round(chargesPerSecond)} < ${targets.chargesPerSecond}`);
  if (targets.p99Ms !== null && result.latency.p99 > targets.p99Ms)
    misses.push(`p99 ${result.latency.p99} ms > ${targets.p99Ms} ms`);
  if (targets.ratio !== null && ratio < targets.ratio)
    misses.push(`ratio ${round(ratio, 3)} < ${targets.ratio}`);
  if (result.non2xx > 0) misses.push(`${result.non2xx} non-2xx answers`);
  if (result.errors > 0) misses.push(`${result.errors} errors (${result.timeouts} timeouts)`);
  if (!paymentsMatch) misses.push('payments recorded do not match the 2xx answers');
  if (insert.rowsInTable !== insert.rowsExpected)
    misses.push(
      `bench_insert has ${insert.rowsInTable} rows, ${insert.rowsExpected} commits were acknowledged`,
    );
  if (logTail) log(`server log (last lines):\n${logTail}`);

  return {
    name: 'charge',
    db: opts.db,
    durationSeconds: round(result.duration, 2),
    connections: opts.connections,
    connectionsChosenBy: opts.connectionsChosenBy,
    gatewayLatencyMs: opts.gatewayLatencyMs,
    gatewayLimits: limits,
    gatewayCeilingPerSecond: ceiling,
    backends,
    dbPerPayment,
    chargesPerSecond: round(chargesPerSecond),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    insertCommitsPerSecond: round(insert.commitsPerSecond),
    ratio: round(ratio, 3),
    targets,
    meetsTargets: misses.length === 0,
    node: process.version,
    cpus: availableParallelism(),
    at,
    serverRevision: revision,
    misses,
    latencyMs: {
      mean: round(result.latency.mean, 2),
      p90: result.latency.p90,
      p99_9: result.latency.p99_9,
      max: result.latency.max,
    },
    loadAverageAtStart,
    cpu,
    timeouts: result.timeouts,
    warmupSeconds: opts.warmupSeconds,
    serverPoolSize: opts.db === 'postgres' ? poolSize : null,
    responses2xx: result['2xx'],
    successResponses,
    unanswered,
    paymentsRecorded: recorded,
    paymentsRecordedBy: opts.db === 'postgres' ? 'database' : 'metrics',
    paymentsInDatabase: inDatabase,
    paymentsCountedByServer: countedByServer,
    paymentsMatch,
    insert: {
      clients: insert.clients,
      seconds: round(insert.seconds, 2),
      commits: insert.commits,
      rowsMatch: insert.rowsInTable === insert.rowsExpected,
      cpu: insert.cpu,
    },
  };
}

/** Commits per payment, and the tables read by sequential scans (rows read per payment). */
function dbLine(d: DbCounters): string {
  const scans = Object.entries(d.tables)
    .filter(([, t]) => (t.seq_tup_read ?? 0) >= 1)
    .map(([name, t]) => `${name} ${t.seq_scan} seq scans reading ${t.seq_tup_read} rows`);
  return `${d.database.xact_commit} commits, ${d.database.tup_inserted} rows inserted, ${d.database.tup_updated} updated${scans.length > 0 ? `; ${scans.join(', ')}` : '; no sequential scans'}`;
}

/** The readable summary printed without --json. */
export function formatCharge(r: ChargeReport): string {
  const t = r.targets;
  const target = (ok: boolean) => (ok ? 'met' : 'MISSED');
  const lines = [
    `charge on ${r.db}: gateway ${r.gatewayLatencyMs} ms per call, ${r.connections} connections${r.connectionsChosenBy === 'default' && r.gatewayLatencyMs > 0 ? ' (chosen for the latency)' : ''}, ${r.durationSeconds} s measured (after ${r.warmupSeconds} s warm-up)`,
    `  charges/s          ${r.chargesPerSecond}   (target ≥ ${t.chargesPerSecond}: ${target(r.chargesPerSecond >= t.chargesPerSecond)})`,
    `  latency p50 / p99  ${r.p50Ms} ms / ${r.p99Ms} ms${t.p99Ms === null ? '' : `   (p99 target ≤ ${t.p99Ms} ms: ${target(r.p99Ms <= t.p99Ms)})`}`,
    `  latency mean/p90/p99.9/max  ${r.latencyMs.mean} / ${r.latencyMs.p90} / ${r.latencyMs.p99_9} / ${r.latencyMs.max} ms`,
    `  non-2xx / errors   ${r.non2xx} / ${r.errors} (timeouts ${r.timeouts})`,
    `  2xx answers        ${r.responses2xx} (paymentStatus Success: ${r.successResponses}; unanswered at the end: ${r.unanswered})`,
    `  payments recorded  ${r.paymentsRecorded} (by ${r.paymentsRecordedBy}); whole run: ${r.paymentsInDatabase} in the database, ${r.paymentsCountedByServer} counted by the server: ${r.paymentsMatch ? 'consistent' : 'MISMATCH'}`,
    `  insert commits/s   ${r.insertCommitsPerSecond}   (${r.insert.clients} clients, ${r.insert.seconds} s, rows ${r.insert.rowsMatch ? 'match' : 'MISMATCH'})`,
    r.insert.cpu === null
      ? null
      : `  CPU ms per insert  client ${r.insert.cpu.msPerOp.loadGenerator}, postgres ${r.insert.cpu.msPerOp.postgres}, other ${r.insert.cpu.msPerOp.other} (machine ${r.insert.cpu.machineBusyPercent}% busy)`,
    `  ratio              ${r.ratio}${t.ratio === null ? '' : `   (target ≥ ${t.ratio}: ${target(r.ratio >= t.ratio)})`}`,
    r.cpu === null
      ? '  CPU split          (not available on this platform)'
      : `  CPU ms per charge  server ${r.cpu.msPerOp.server}, load generator ${r.cpu.msPerOp.loadGenerator}, postgres ${r.cpu.msPerOp.postgres}, other ${r.cpu.msPerOp.other} (machine ${r.cpu.machineBusyPercent}% busy, ${r.cpu.stealPercent}% steal)`,
    r.gatewayCeilingPerSecond === null
      ? null
      : `  gateway limits     ${r.gatewayLimits.perOrg} calls in flight per org, ${r.gatewayLimits.perGateway} per gateway: at most ${r.gatewayCeilingPerSecond} charges/s for one org`,
    r.backends === null
      ? null
      : [
          `  server DB conns    busy mean ${r.backends.busyMean}, max ${r.backends.busyMax}; open at most ${r.backends.openMax} (${r.backends.samples} samples); busy doing:`,
          ...r.backends.doing
            .slice(0, 6)
            .map((d) => `    ${(d.share * 100).toFixed(1).padStart(5)} %  ${d.what}`),
        ].join('\n'),
    r.dbPerPayment === null ? null : `  per payment (DB)   ${dbLine(r.dbPerPayment)}`,
    `  server at ${r.serverRevision ?? 'an unknown revision'}; node ${r.node}, ${r.cpus} CPUs, load average at start ${r.loadAverageAtStart.join(' ')}${r.serverPoolSize === null ? '' : `, server DB_POOL_SIZE ${r.serverPoolSize}`}`,
    r.meetsTargets ? 'all targets met' : `targets missed: ${r.misses.join('; ')}`,
  ];
  return lines.filter((l) => l !== null).join('\n');
}
