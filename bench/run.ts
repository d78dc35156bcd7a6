/**
 * `npm run bench -- <name> [options]`: runs one benchmark against the real server.
 * Progress goes to stderr; the result (a summary, or one JSON object with --json) to stdout.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type DbKind, formatCharge, runCharge } from './charge.ts';
import { errorText, installSignalHandlers, runCleanups, startWatchdog } from './lifecycle.ts';
import { DEFAULT_PG_URL, loopbackPgUrl } from './postgres.ts';
import { formatSchedules, runSchedules } from './schedules.ts';
import { formatSync, runSync } from './sync.ts';
import { formatTerminal, runTerminal } from './terminal.ts';
import { formatWebhooks, runWebhooks } from './webhooks.ts';

const DEFAULTS = {
  duration: 20,
  // 2 cores: throughput plateaus by 10 connections; more only add queueing (docs/benchmarks.md).
  connections: 10,
  warmup: 3,
  insertDuration: 5,
};

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

Options (charge):
  --db pglite|postgres     database (default pglite; postgres uses ${DEFAULT_PG_URL})
  --duration <s>           measured seconds (default ${DEFAULTS.duration})
  --connections <n>        HTTP connections, and INSERT clients (default ${DEFAULTS.connections})
  --warmup <s>             warm-up seconds before measuring (default ${DEFAULTS.warmup}; 0 for none)
  --insert-duration <s>    seconds of the INSERT commit measurement (default ${DEFAULTS.insertDuration})
  --pg-url <url>           admin URL of a loopback PostgreSQL (default ${DEFAULT_PG_URL});
                           a database kupah_bench_<random> is created there and dropped after
  --cpu-prof <dir>         run the server with node --cpu-prof, writing its profile to <dir>
Options (schedules, webhooks; both use PostgreSQL at --pg-url):
  --events <n>             webhooks: events in the burst (default 20000)
  --instalments <n>        schedules: due instalments to charge (default 10000)
  --workers <n>            schedules: scheduler workers (default 8)
  --payments <n>           sync: payments to queue and forward (default 10000)

  --json                   print one JSON object instead of the summary
  --check                  exit 1 when a target is missed
  -h, --help               this help

The server runs with the inherited environment plus PORT, HOST, LOG_LEVEL=warn, ADMIN_TOKEN,
DATA_DIR and DATABASE_URL chosen by the benchmark (so DB_POOL_SIZE, if set, is passed through).`;

const BENCHMARKS = ['charge', 'schedules', 'webhooks', 'sync', 'terminal'] as const;

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

async function main(argv: string[]): Promise<number> {
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

  if (name === 'schedules' || name === 'webhooks' || name === 'sync') return runOnPostgres(name, values);
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
    const connections = positiveNumber('connections', values.connections, DEFAULTS.connections);
    if (!Number.isInteger(connections) || connections > 80)
      throw new UsageError('--connections must be a whole number from 1 to 80');
    options = {
      db,
      durationSeconds: positiveNumber('duration', values.duration, DEFAULTS.duration),
      connections,
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
  name: 'schedules' | 'webhooks' | 'sync',
  values: ReturnType<typeof parse>['values'],
): Promise<number> {
  let pgUrl: URL;
  let count: number;
  let workers: number;
  try {
    pgUrl = loopbackPgUrl(values['pg-url'] ?? DEFAULT_PG_URL);
    const countFlag = { webhooks: 'events', schedules: 'instalments', sync: 'payments' } as const;
    count = positiveNumber(countFlag[name], values[countFlag[name]], name === 'webhooks' ? 20_000 : 10_000);
    workers = positiveNumber('workers', values.workers, 8);
    if (!Number.isInteger(count) || count > 1_000_000 || !Number.isInteger(workers) || workers > 64) {
      throw new UsageError('counts must be whole numbers (at most 1,000,000; workers at most 64)');
    }
  } catch (err) {
    console.error(`bench: ${errorText(err)} (see --help)`);
    return 2;
  }
  if (name === 'sync') {
    const opts = { pgUrl, payments: count, log: (line: string) => console.error(`bench: ${line}`) };
    return runReported(name, values, 900_000, () => runSync(opts), formatSync);
  }
  if (name === 'schedules') {
    const opts = { pgUrl, engineSchedules: 100_000, instalments: count, concurrency: workers };
    return runReported(name, values, 600_000, () => runSchedules(opts), formatSchedules);
  }
  const opts = { pgUrl, events: count, latencyRate: 200, latencySeconds: 10 };
  return runReported(name, values, 600_000, () => runWebhooks(opts), formatWebhooks);
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
