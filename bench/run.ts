/**
 * `npm run bench -- <name> [options]`: runs one benchmark against the real server.
 * Progress goes to stderr; the result (a summary, or one JSON object with --json) to stdout.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type DbKind, defaultConnections, formatCharge, runCharge } from './charge.ts';
import { formatGatewayHang, runGatewayHang } from './gateway-hang.ts';
import { errorText, installSignalHandlers, runCleanups, startWatchdog } from './lifecycle.ts';
import { DEFAULT_PG_URL, loopbackPgUrl } from './postgres.ts';
import { formatReceipts, runReceipts } from './receipts.ts';
import { formatReports, runReports } from './reports.ts';
import { formatSchedules, runSchedules } from './schedules.ts';
import { formatSync, runSync } from './sync.ts';
import { formatTerminal, runTerminal } from './terminal.ts';
import { formatWebhooks, runWebhooks } from './webhooks.ts';

const DEFAULTS = {
  duration: 20,
  // 2 cores: throughput plateaus by 10 connections; more only add queueing (docs/benchmarks.md).
  // With --gateway-latency the charge default follows Little's law (defaultConnections).
  connections: 10,
  warmup: 3,
  insertDuration: 5,
  hangCharges: 200,
  hangDuration: 10,
  gatewayTimeout: 30_000,
};
/** autocannon opens one socket per connection; beyond this the load generator is the limit. */
const MAX_CONNECTIONS = 2000;

const USAGE = `Usage: npm run -s bench -- <benchmark> [options]

Benchmarks:
  charge    POST /v1/External/Charge on the real server (autocannon, a unique
            uniqueTransactionId per request), then bare INSERT commits/s on the same
            database and driver, and the ratio of the two.

  schedules the calendar engine over 100,000 mixed schedules (a year each), then the
            recurring scheduler charging 10,000 due instalments on PostgreSQL.
  webhooks  committed payment events on PostgreSQL delivered to a loopback receiver:
            deliveries/s of a burst, and commit-to-delivery latency at a steady rate.
  terminal  the terminal's web build in Chromium: cold start to an interactive amount
            screen, offline enqueue of 1,000 card donations, renderer JavaScript size.
  sync      payments queued offline in the terminal's data layer in Chromium (Dexie,
            sealed card data), then forwarded by the sync loop to the server on PostgreSQL.
  receipts  year-end statements of 10,000 donors (--donors) on PostgreSQL, as
            \`npm run admin -- receipts annual --send\` makes them: gifts read, a PDF each (half
            in Hebrew), queued for e-mail (target ≤ 60 s).
  reports   the read API on PostgreSQL over a year of 1,000,000 payments (--payments): totals
            by every groupBy (target ≤ 500 ms), payment pages, cursor, donor search.
  console   the console: first-screen JavaScript gzipped (target ≤ 300 KB), then Today and the
            payments search over 1,000,000 payments on PostgreSQL (target ≤ 300 ms each); its own
            options: --payments <n> --repeats <n> --dense --keep --reuse <db> --pg <url>.
  gateway-hang
            the server on PostgreSQL with a gateway that never answers (SANDBOX_GATEWAY_FAULTS=hang):
            200 Charges kept in flight, all hanging, while SaveDonor (APIKey) is measured under
            autocannon and /readyz is asked every 100 ms.

Options (charge):
  --db pglite|postgres     database (default pglite; postgres uses ${DEFAULT_PG_URL})
  --duration <s>           measured seconds (default ${DEFAULTS.duration})
  --connections <n>        HTTP connections, and INSERT clients up to DB_POOL_SIZE (default
                           ${DEFAULTS.connections}; with --gateway-latency L: 10 + ⌈1.25 × target/s × L⌉,
                           385 on postgres with 300 ms)
  --gateway-latency <ms>   charge, sync: every sandbox gateway call takes this long (the server's
                           SANDBOX_GATEWAY_LATENCY_MS; default 0)
  --warmup <s>             warm-up seconds before measuring (default ${DEFAULTS.warmup}; 0 for none)
  --insert-duration <s>    seconds of the INSERT commit measurement (default ${DEFAULTS.insertDuration})
  --pg-url <url>           admin URL of a loopback PostgreSQL (default ${DEFAULT_PG_URL});
                           a database kupah_bench_<random> is created there and dropped after
  --cpu-prof <dir>         run the server with node --cpu-prof, writing its profile to <dir>
Options (schedules, webhooks, sync; all use PostgreSQL at --pg-url):
  --events <n>             webhooks: events in the burst (default 20000)
  --instalments <n>        schedules: due instalments to charge (default 10000)
  --workers <n>            schedules: scheduler workers (default 8)
  --payments <n>           sync: payments to queue and forward (default 10000);
                           reports: payments in the year (default 1000000)
  --donors <n>             receipts: donors with gifts in the year (default 10000)
Options (gateway-hang; PostgreSQL at --pg-url):
  --charges <n>            charges kept in flight, all hanging (default ${DEFAULTS.hangCharges})
  --gateway-timeout <ms>   the server's GATEWAY_TIMEOUT_MS (default ${DEFAULTS.gatewayTimeout})
  --duration <s>           measured SaveDonor seconds under the hang (default ${DEFAULTS.hangDuration})
  --connections <n>        SaveDonor connections (default ${DEFAULTS.connections})

  --json                   print one JSON object instead of the summary
  --check                  exit 1 when a target is missed
  -h, --help               this help

The server runs with the inherited environment plus PORT, HOST, ADMIN_PORT, ADMIN_HOST,
LOG_LEVEL=warn, ADMIN_TOKEN,
DATA_DIR and DATABASE_URL chosen by the benchmark, and SANDBOX_GATEWAY_LATENCY_MS and
SANDBOX_GATEWAY_FAULTS set (gateway-hang: also GATEWAY_TIMEOUT_MS) or removed; so DB_POOL_SIZE
and GATEWAY_CONCURRENCY[_PER_ORG], if set, are passed through.`;

const CONSOLE_BENCH = fileURLToPath(new URL('./console.ts', import.meta.url));

const BENCHMARKS = [
  'charge',
  'schedules',
  'webhooks',
  'sync',
  'terminal',
  'gateway-hang',
  'reports',
  'receipts',
  'console',
] as const;

function positiveNumber(name: string, text: string | undefined, fallback: number, allowZero = false): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0 || (n === 0 && !allowZero))
    throw new UsageError(
      `--${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, not ${text}`,
    );
  return n;
}

class UsageError extends Error {}

/** --gateway-latency: whole milliseconds, 0 to 60,000 (0: the sandbox answers at once). */
function gatewayLatency(text: string | undefined): number {
  const ms = positiveNumber('gateway-latency', text, 0, true);
  if (!Number.isInteger(ms) || ms > 60_000)
    throw new UsageError('--gateway-latency must be a whole number of ms from 0 to 60000');
  return ms;
}

async function main(argv: string[]): Promise<number> {
  // The console's benchmark has options of its own (bench/console.ts): handed over whole.
  if (argv[0] === 'console') {
    const r = spawnSync(process.execPath, [...process.execArgv, CONSOLE_BENCH, ...argv.slice(1)], {
      stdio: 'inherit',
    });
    return r.status ?? 1;
  }
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    console.error(`bench: ${errorText(err)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const name = positionals[0];
  if (values.help || name === undefined || name === 'help') {
    console.log(USAGE);
    return name === undefined && !values.help ? 2 : 0;
  }
  if (!(BENCHMARKS as readonly string[]).includes(name)) {
    console.error(`bench: unknown benchmark "${name}"; known: ${BENCHMARKS.join(', ')} (see --help)`);
    return 2;
  }
  if (positionals.length > 1) {
    console.error(`bench: unexpected arguments: ${positionals.slice(1).join(' ')}`);
    return 2;
  }

  if (
    name === 'schedules' ||
    name === 'webhooks' ||
    name === 'sync' ||
    name === 'gateway-hang' ||
    name === 'reports' ||
    name === 'receipts'
  )
    return runOnPostgres(name, values);
  if (name === 'terminal') {
    const opts = { donations: 1000, starts: 7, log: (line: string) => console.error(`bench: ${line}`) };
    return runReported(name, values, 600_000, () => runTerminal(opts), formatTerminal);
  }

  let db: DbKind;
  let options: Parameters<typeof runCharge>[0];
  try {
    const dbText = values.db ?? 'pglite';
    if (dbText !== 'pglite' && dbText !== 'postgres')
      throw new UsageError(`--db must be pglite or postgres, not ${dbText}`);
    db = dbText;
    const gatewayLatencyMs = gatewayLatency(values['gateway-latency']);
    const connections = positiveNumber(
      'connections',
      values.connections,
      Math.min(MAX_CONNECTIONS, defaultConnections(db, gatewayLatencyMs)),
    );
    if (!Number.isInteger(connections) || connections > MAX_CONNECTIONS)
      throw new UsageError(`--connections must be a whole number from 1 to ${MAX_CONNECTIONS}`);
    options = {
      db,
      durationSeconds: positiveNumber('duration', values.duration, DEFAULTS.duration),
      connections,
      connectionsChosenBy: values.connections === undefined ? 'default' : 'option',
      gatewayLatencyMs,
      warmupSeconds: positiveNumber('warmup', values.warmup, DEFAULTS.warmup, true),
      insertSeconds: positiveNumber('insert-duration', values['insert-duration'], DEFAULTS.insertDuration),
      pgUrl: values['pg-url'] ?? DEFAULT_PG_URL,
      cpuProfDir:
        values['cpu-prof'] === undefined
          ? undefined
          : resolve(process.env.INIT_CWD ?? process.cwd(), values['cpu-prof']),
      log: (line) => console.error(`bench: ${line}`),
    };
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`bench: ${err.message} (see --help)`);
      return 2;
    }
    throw err;
  }

  // Everything (server start, warm-up, run, counts, inserts, cleanup) is bounded.
  const bound = (options.warmupSeconds + options.durationSeconds + options.insertSeconds * 1.2 + 240) * 1000;
  return runReported(name, values, bound, () => runCharge(options), formatCharge);
}

/**
 * Run one benchmark under a watchdog, print its report (JSON with --json), and always clean up.
 * Exit code: 0, or 1 when it failed or, with --check, missed a target.
 */
async function runReported<R extends { meetsTargets: boolean }>(
  name: string,
  values: ReturnType<typeof parse>['values'],
  watchdogMs: number,
  run: () => Promise<R>,
  format: (r: R) => string,
): Promise<number> {
  installSignalHandlers();
  const stopWatchdog = startWatchdog(watchdogMs);
  try {
    const report = await run();
    console.log(values.json ? JSON.stringify(report) : format(report));
    return values.check && !report.meetsTargets ? 1 : 0;
  } catch (err) {
    console.error(`bench: ${name} failed: ${errorText(err)}`);
    return 1;
  } finally {
    await runCleanups();
    stopWatchdog();
  }
}

async function runOnPostgres(
  name: 'schedules' | 'webhooks' | 'sync' | 'gateway-hang' | 'reports' | 'receipts',
  values: ReturnType<typeof parse>['values'],
): Promise<number> {
  let pgUrl: URL;
  let count: number;
  let workers: number;
  let gatewayLatencyMs: number;
  try {
    pgUrl = loopbackPgUrl(values['pg-url'] ?? DEFAULT_PG_URL);
    gatewayLatencyMs = gatewayLatency(values['gateway-latency']);
    if (gatewayLatencyMs > 0 && name !== 'sync')
      throw new UsageError('--gateway-latency applies to charge and sync only');
    if (name === 'gateway-hang') return runHang(pgUrl, values);
    const countFlag = {
      webhooks: 'events',
      schedules: 'instalments',
      sync: 'payments',
      reports: 'payments',
      receipts: 'donors',
    } as const;
    const defaultCount = {
      webhooks: 20_000,
      schedules: 10_000,
      sync: 10_000,
      reports: 1_000_000,
      receipts: 10_000,
    } as const;
    count = positiveNumber(countFlag[name], values[countFlag[name]], defaultCount[name]);
    workers = positiveNumber('workers', values.workers, 8);
    if (!Number.isInteger(count) || count > 1_000_000 || !Number.isInteger(workers) || workers > 64) {
      throw new UsageError('counts must be whole numbers (at most 1,000,000; workers at most 64)');
    }
  } catch (err) {
    console.error(`bench: ${errorText(err)} (see --help)`);
    return 2;
  }
  if (name === 'sync') {
    const opts = {
      pgUrl,
      payments: count,
      gatewayLatencyMs,
      log: (line: string) => console.error(`bench: ${line}`),
    };
    return runReported(name, values, 900_000, () => runSync(opts), formatSync);
  }
  if (name === 'reports') {
    const opts = {
      pgUrl,
      payments: count,
      repeats: 5,
      log: (line: string) => console.error(`bench: ${line}`),
    };
    return runReported(name, values, 1_200_000, () => runReports(opts), formatReports);
  }
  if (name === 'receipts') {
    const opts = {
      pgUrl,
      donors: count,
      giftsPerDonor: 3,
      log: (line: string) => console.error(`bench: ${line}`),
    };
    return runReported(name, values, 900_000, () => runReceipts(opts), formatReceipts);
  }
  if (name === 'schedules') {
    const opts = { pgUrl, engineSchedules: 100_000, instalments: count, concurrency: workers };
    return runReported(name, values, 600_000, () => runSchedules(opts), formatSchedules);
  }
  const opts = { pgUrl, events: count, latencyRate: 200, latencySeconds: 10 };
  return runReported(name, values, 600_000, () => runWebhooks(opts), formatWebhooks);
}

async function runHang(pgUrl: URL, values: ReturnType<typeof parse>['values']): Promise<number> {
  let opts: Parameters<typeof runGatewayHang>[0];
  try {
    const charges = positiveNumber('charges', values.charges, DEFAULTS.hangCharges);
    const connections = positiveNumber('connections', values.connections, DEFAULTS.connections);
    const timeout = positiveNumber('gateway-timeout', values['gateway-timeout'], DEFAULTS.gatewayTimeout);
    const duration = positiveNumber('duration', values.duration, DEFAULTS.hangDuration);
    if (!Number.isInteger(charges) || charges > 5_000)
      throw new UsageError('--charges must be a whole number from 1 to 5000');
    if (!Number.isInteger(connections) || connections > 200)
      throw new UsageError('--connections must be a whole number from 1 to 200');
    if (!Number.isInteger(timeout) || timeout < 100 || timeout > 300_000)
      throw new UsageError(
        '--gateway-timeout must be whole ms from 100 to 300000 (the server accepts those)',
      );
    if (duration > 120) throw new UsageError('--duration must be at most 120 s');
    opts = {
      pgUrl,
      charges,
      rampPerSecond: 100,
      gatewayTimeoutMs: timeout,
      durationSeconds: duration,
      baselineSeconds: 5,
      connections,
      log: (line: string) => console.error(`bench: ${line}`),
    };
  } catch (err) {
    console.error(`bench: ${errorText(err)} (see --help)`);
    return 2;
  }
  // Server start, warm-up, baseline, ramp, measurement and a stop that may wait for hanging requests.
  const bound = (opts.durationSeconds + opts.charges / opts.rampPerSecond + 180) * 1000;
  return runReported('gateway-hang', values, bound, () => runGatewayHang(opts), formatGatewayHang);
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      db: { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      warmup: { type: 'string' },
      'insert-duration': { type: 'string' },
      'pg-url': { type: 'string' },
      'cpu-prof': { type: 'string' },
      events: { type: 'string' },
      instalments: { type: 'string' },
      workers: { type: 'string' },
      payments: { type: 'string' },
      donors: { type: 'string' },
      'gateway-latency': { type: 'string' },
      charges: { type: 'string' },
      'gateway-timeout': { type: 'string' },
      json: { type: 'boolean' },
      check: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(`bench: ${errorText(err)}`);
    void runCleanups().finally(() => process.exit(1));
  },
);
