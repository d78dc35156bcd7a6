/**
 * Process entry: config → database (+ migrations, demo org) → HTTP → graceful shutdown on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import pino from 'pino';
import { createOrg } from './admin/admin-service.ts';
import { createApp } from './app.ts';
import { adminToken, loadConfig } from './config.ts';
import { openDatabase } from './db/database.ts';
import { migrate } from './db/migrations.ts';
import { installationSecret } from './db/server-state.ts';
import type { Deps } from './deps.ts';
import { gatewayCalls } from './gateway/gateway-calls.ts';
import { createGatewayRegistry } from './gateway/registry.ts';
import { parseSandboxFaults, sandboxGateway } from './gateway/sandbox-gateway.ts';
import { createMetrics } from './http/metrics.ts';
import { purgeKeys } from './idempotency/repo.ts';
import { countOrgs } from './orgs/repo.ts';
import { paymentRecovery } from './payments/recovery.ts';
import { recurringScheduler } from './schedules/scheduler.ts';
import { loadKeyEncryptionKey } from './secrets/key-encryption.ts';
import { webhookDispatcher } from './webhooks/dispatcher.ts';

/** Paths pino removes from every log line, wherever card data or credentials could appear. */
export const REDACT = [
  'req.headers.authorization',
  'req.headers.apikey',
  '*.ccNum',
  '*.cvv',
  '*.card',
  '*.bankAccount',
  '*.accountNum',
  '*.apiKey',
  '*.sourceGuid',
];

/**
 * The service's clock: real time, or (tests only: KUPAH_CLOCK_FILE) the instant written in a file,
 * so a process-level test can move a real server through a simulated year.
 */
function clock(file: string | undefined): () => Date {
  if (!file) return () => new Date();
  let cached = { at: 0, value: new Date() };
  return () => {
    if (Date.now() - cached.at > 20) {
      try {
        cached = { at: Date.now(), value: new Date(readFileSync(file, 'utf8').trim()) };
      } catch {
        cached = { at: Date.now(), value: cached.value };
      }
    }
    return cached.value;
  };
}

async function main() {
  const config = loadConfig();
  const logger = pino({ level: config.LOG_LEVEL, redact: { paths: REDACT, censor: '[redacted]' } });
  const db = await openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.dataDir,
    poolSize: config.DB_POOL_SIZE,
  });
  const applied = await migrate(db);
  if (applied.length > 0) logger.info({ applied }, 'migrations applied');

  if (db.kind === 'pglite' && (await countOrgs(db)) === 0) {
    const demo = await createOrg(db, 'Demo Organisation');
    process.stdout.write(
      [
        '',
        'A demo organisation was created (shown once; keep these):',
        `  ORG_GUID=${demo.orgGuid}`,
        `  API_KEY=${demo.apiKey}`,
        `  SOURCE_GUID=${demo.sourceGuid}`,
        '',
        '',
      ].join('\n'),
    );
  }

  const kek = loadKeyEncryptionKey(config);
  const sandbox = sandboxGateway({
    journalFile: config.SANDBOX_GATEWAY_JOURNAL,
    profile: {
      latencyMs: config.SANDBOX_GATEWAY_LATENCY_MS,
      faults: parseSandboxFaults(config.SANDBOX_GATEWAY_FAULTS),
    },
  });
  const deps: Deps = {
    db,
    gateways: createGatewayRegistry({ db, sandbox, kek, logger }),
    calls: gatewayCalls({
      timeoutMs: config.GATEWAY_TIMEOUT_MS,
      settleMs: config.GATEWAY_SETTLE_MS,
      perOrg: config.GATEWAY_CONCURRENCY_PER_ORG,
      perGateway: config.GATEWAY_CONCURRENCY,
    }),
    now: clock(config.KUPAH_CLOCK_FILE),
    logger,
    metrics: createMetrics(),
    requestHashKey: await installationSecret(db, 'request_hash_key'),
  };
  const dispatcher = webhookDispatcher(deps, {
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    leaseMs: config.WEBHOOK_LEASE_MS,
  });
  if (config.WEBHOOK_DISPATCHER) await dispatcher.start();
  const scheduler = recurringScheduler(deps, { pollMs: config.SCHEDULER_POLL_MS });
  if (config.SCHEDULER) scheduler.start();
  const recovery = paymentRecovery(deps, { pollMs: config.RECOVERY_POLL_MS });
  if (config.RECOVERY) recovery.start();

  let ready = true;
  const terminalDir =
    config.TERMINAL_DIR ?? fileURLToPath(new URL('../../terminal/dist/renderer/', import.meta.url));
  const app = createApp(deps, { adminToken: adminToken(config), isReady: () => ready, terminalDir });
  const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, (info) => {
    logger.info({ port: info.port, database: db.kind }, `listening on http://127.0.0.1:${info.port}`);
  });

  // Idempotency records are kept 30 days (decisions), then purged hourly.
  const purge = setInterval(
    () =>
      purgeKeys(db, 30).then(
        (n) => n > 0 && logger.info({ purged: n }, 'idempotency records older than 30 days purged'),
        (err) => logger.warn({ err: String(err) }, 'idempotency purge failed'),
      ),
    3_600_000,
  );
  purge.unref();

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    ready = false;
    clearInterval(purge);
    logger.info({ signal }, 'shutting down: finishing requests in flight');
    const force = setTimeout(() => {
      logger.warn('shutdown timed out; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    server.close(async () => {
      await scheduler.stop().catch(() => {});
      await recovery.stop().catch(() => {});
      await dispatcher.stop().catch(() => {});
      await db.close().catch(() => {});
      logger.info('stopped');
      process.exit(0);
    });
    if ('closeIdleConnections' in server) (server as { closeIdleConnections(): void }).closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
