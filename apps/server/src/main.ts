/**
 * Process entry: config → database (+ migrations, demo org) → HTTP → graceful shutdown on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import pino from 'pino';
import { deriveFingerprintKey } from './abuse/fingerprint.ts';
import { purgeAbuseRecords } from './abuse/limits.ts';
import { createOrg } from './admin/admin-service.ts';
import { createAdminApp, createApp } from './app.ts';
import { adminToken, type Config, isLoopback, loadConfig } from './config.ts';
import { consoleLinkMailer } from './console/link-mail.ts';
import { purgeConsoleRecords } from './console/users-service.ts';
import { openDatabase } from './db/database.ts';
import { migrate } from './db/migrations.ts';
import { installationSecret, sealedInstallationKey } from './db/server-state.ts';
import type { Deps } from './deps.ts';
import { purgeOpsSeen } from './devices/ops-seen.ts';
import { gatewayCalls } from './gateway/gateway-calls.ts';
import { createGatewayRegistry } from './gateway/registry.ts';
import { parseSandboxFaults, sandboxGateway } from './gateway/sandbox-gateway.ts';
import { createMetrics } from './http/metrics.ts';
import { purgeFullBuckets } from './http/rate-limit.ts';
import { purgeKeys } from './idempotency/repo.ts';
import { countOrgs } from './orgs/repo.ts';
import { paymentRecovery } from './payments/recovery.ts';
import { receiptMailer } from './receipts/mailer.ts';
import { recurringScheduler } from './schedules/scheduler.ts';
import { sealClearSecrets } from './secrets/at-rest.ts';
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

/** The PEM certificate chain and key of TLS_CERT_FILE / TLS_KEY_FILE (unset: plain HTTP). */
function tlsFiles(config: Config): { cert: Buffer; key: Buffer } | undefined {
  if (!config.TLS_CERT_FILE || !config.TLS_KEY_FILE) return undefined;
  const read = (name: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(
        `Bad configuration: ${name}: cannot read ${file} (${(err as NodeJS.ErrnoException).code})`,
      );
    }
  };
  return {
    cert: read('TLS_CERT_FILE', config.TLS_CERT_FILE),
    key: read('TLS_KEY_FILE', config.TLS_KEY_FILE),
  };
}

type Fetch = (request: Request, env: unknown) => Response | Promise<Response>;

/** Serves `fetch` on host:port, over TLS when `tls` is given; calls `ready` with the bound address. */
function listen(
  fetch: Fetch,
  port: number,
  hostname: string,
  tls: { cert: Buffer; key: Buffer } | undefined,
  ready: (address: AddressInfo) => void,
) {
  const server = tls
    ? serve({ fetch, port, hostname, createServer: createHttpsServer, serverOptions: tls })
    : serve({ fetch, port, hostname });
  server.once('listening', () => ready(server.address() as AddressInfo));
  return server;
}

const urlOf = (scheme: string, a: AddressInfo) =>
  `${scheme}://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;

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

  const tls = tlsFiles(config);
  const kek = loadKeyEncryptionKey(config);
  // Values an earlier version stored in clear (envelope private keys, webhook secrets) are sealed
  // before anything else runs, whichever workers this instance starts.
  const sealed = await sealClearSecrets(db, kek);
  if (sealed > 0) logger.info({ sealed }, 'secrets stored in clear by an earlier version are now sealed');
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
    // Card fingerprints: keyed by an installation key sealed under the KEK (stable across rotations).
    fingerprintKey: deriveFingerprintKey(await sealedInstallationKey(db, kek, 'fingerprint_key')),
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
  // Receipt e-mails: without SMTP_URL none leaves this instance (they wait, and can be downloaded).
  const mailer =
    config.SMTP_URL && config.RECEIPTS_FROM
      ? receiptMailer(deps, {
          smtpUrl: config.SMTP_URL,
          from: config.RECEIPTS_FROM,
          leaseMs: config.RECEIPT_LEASE_MS,
          retryMs: config.RECEIPT_RETRY_MS,
        })
      : null;
  if (mailer && config.RECEIPT_MAILER) await mailer.start();
  else logger.info('receipt e-mails are not sent by this instance (SMTP_URL unset or RECEIPT_MAILER=0)');

  let ready = true;
  const terminalDir =
    config.TERMINAL_DIR ?? fileURLToPath(new URL('../../terminal/dist/renderer/', import.meta.url));
  const consoleDir = config.CONSOLE_DIR ?? fileURLToPath(new URL('../../console/dist/', import.meta.url));
  // The console's one-time links: made on PUBLIC_URL, e-mailed with the receipts' SMTP settings,
  // and only when PUBLIC_URL is set (a link made on a request's Host header could point anywhere).
  const smtpForLinks = Boolean(config.SMTP_URL && config.RECEIPTS_FROM);
  if (smtpForLinks && !config.PUBLIC_URL) {
    logger.warn(
      'console invitation and reset links are not e-mailed: set PUBLIC_URL (they are shown to the owner or operator only)',
    );
  }
  const consoleLinks = {
    publicUrl: config.PUBLIC_URL,
    mailer:
      smtpForLinks && config.PUBLIC_URL
        ? consoleLinkMailer({ smtpUrl: config.SMTP_URL!, from: config.RECEIPTS_FROM! })
        : undefined,
  };
  const app = createApp(deps, {
    isReady: () => ready,
    terminalDir,
    consoleDir,
    hsts: tls !== undefined,
    console: {
      ...consoleLinks,
      trustProxy: config.TRUST_PROXY,
      allowInsecureWebhooks: config.WEBHOOK_ALLOW_PRIVATE,
    },
  });
  // The admin API and /metrics: their own listener, loopback unless ADMIN_ALLOW_REMOTE=1 (which
  // config allows only with TLS); over TLS too when ADMIN_TLS=1 or not on loopback.
  const remoteAdmin = !isLoopback(config.ADMIN_HOST);
  const adminTls = tls !== undefined && (config.ADMIN_TLS || remoteAdmin) ? tls : undefined;
  if (remoteAdmin) {
    logger.warn(
      { adminHost: config.ADMIN_HOST },
      'ADMIN_ALLOW_REMOTE=1: the admin API listens on a non-loopback address; restrict who can reach it (firewall, VPN)',
    );
  }
  const adminApp = createAdminApp(deps, {
    adminToken: adminToken(config),
    trustProxy: config.TRUST_PROXY,
    hsts: adminTls !== undefined,
    allowInsecureWebhooks: config.WEBHOOK_ALLOW_PRIVATE,
    consoleLinks: {
      ...consoleLinks,
      publicUrl: config.PUBLIC_URL ?? `${tls ? 'https' : 'http'}://localhost:${config.PORT}`,
    },
  });
  const failed = (what: string) => (err: NodeJS.ErrnoException) => {
    console.error(`cannot listen for the ${what}: ${err.code ?? ''} ${err.message}`.trim());
    process.exit(1);
  };
  const adminServer = listen(adminApp.fetch, config.ADMIN_PORT, config.ADMIN_HOST, adminTls, (a) => {
    const url = urlOf(adminTls ? 'https' : 'http', a);
    logger.info(
      { adminPort: a.port, adminAddress: a.address, adminUrl: url },
      `admin API listening on ${url}`,
    );
  });
  adminServer.on('error', failed('admin API (ADMIN_HOST:ADMIN_PORT)'));
  const server = listen(app.fetch, config.PORT, config.HOST, tls, (a) => {
    const url = urlOf(tls ? 'https' : 'http', a);
    logger.info({ port: a.port, address: a.address, url, database: db.kind }, `listening on ${url}`);
  });
  server.on('error', failed('public API (HOST:PORT)'));

  // Hourly housekeeping: idempotency records are kept 30 days (decisions); card attempts, ended
  // blocks and what devices pushed 31 days; full rate-limit buckets are dropped.
  const housekeeping: [string, () => Promise<number>][] = [
    ['idempotency records older than 30 days', () => purgeKeys(db, 30)],
    ['card attempts and ended abuse blocks older than 31 days', () => purgeAbuseRecords(db, deps.now())],
    ['device operations first seen more than 31 days ago', () => purgeOpsSeen(db, deps.now())],
    ['full rate-limit buckets', () => purgeFullBuckets(db)],
    [
      'ended console sessions, sign-in failure counters and old one-time links',
      () => purgeConsoleRecords(db, deps.now()),
    ],
  ];
  const purge = setInterval(() => {
    for (const [what, run] of housekeeping) {
      run().then(
        (n) => n > 0 && logger.info({ purged: n }, `${what} purged`),
        (err) => logger.warn({ err: String(err) }, `purge of ${what} failed`),
      );
    }
  }, 3_600_000);
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
    adminServer.close();
    if ('closeIdleConnections' in adminServer)
      (adminServer as { closeIdleConnections(): void }).closeIdleConnections();
    server.close(async () => {
      await scheduler.stop().catch(() => {});
      await recovery.stop().catch(() => {});
      await dispatcher.stop().catch(() => {});
      await mailer?.stop().catch(() => {});
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
