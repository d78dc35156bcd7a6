import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { KEY_FORMAT, parseKeyMaterial } from './secrets/key-encryption.ts';

/** A key-encryption key: 32 bytes as base64 or hex (the message never repeats the value). */
const masterKey = z
  .string()
  .optional()
  .transform((s) => (s === undefined || s.trim() === '' ? undefined : s.trim()))
  .refine((s) => s === undefined || parseKeyMaterial(s) !== null, KEY_FORMAT);

const env = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8787),
  HOST: z.string().default('0.0.0.0'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** Empty means unset (`DATA_DIR= npm start` must not scatter a database over the working directory). */
  DATA_DIR: z
    .string()
    .optional()
    .transform((s) => (s === undefined || s.trim() === '' ? './data' : s)),
  /** At least 32 characters (e.g. `openssl rand -hex 32`); unset: generated into DATA_DIR/admin-token. */
  ADMIN_TOKEN: z
    .string()
    .min(32, 'must be at least 32 characters (e.g. openssl rand -hex 32)')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /** The admin API and /metrics listen here only (never on PORT). 0: any free port (tests). */
  ADMIN_PORT: z.coerce.number().int().min(0).max(65535).default(8788),
  /** A loopback address unless ADMIN_ALLOW_REMOTE=1 (then TLS is required on it). */
  ADMIN_HOST: z.string().trim().min(1).default('127.0.0.1'),
  /** 1: let ADMIN_HOST be a non-loopback address (logged as a warning; needs TLS_CERT_FILE). */
  ADMIN_ALLOW_REMOTE: z
    .enum(['0', '1', 'true', 'false', ''])
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  /** 1: serve the admin listener over TLS too (always when it is not on loopback). */
  ADMIN_TLS: z
    .enum(['0', '1', 'true', 'false', ''])
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  /** PEM certificate chain and private key: the server speaks HTTPS itself on PORT. Both or neither. */
  TLS_CERT_FILE: z
    .string()
    .optional()
    .transform((s) => (s?.trim() ? s.trim() : undefined)),
  TLS_KEY_FILE: z
    .string()
    .optional()
    .transform((s) => (s?.trim() ? s.trim() : undefined)),
  /**
   * 1: behind a reverse proxy that appends the client's address to X-Forwarded-For; the admin
   * lockout then keys on its last entry. Never set it when clients reach the server directly.
   */
  TRUST_PROXY: z
    .enum(['0', '1', 'true', 'false', ''])
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(500).default(20),
  /** Let webhooks reach loopback and private addresses (local development and tests only). */
  WEBHOOK_ALLOW_PRIVATE: z
    .enum(['0', '1', 'true', 'false', ''])
    .default('0')
    .transform((v) => v === '1' || v === 'true'),
  /** How long a claimed delivery is leased before another instance may retry it (after a crash). */
  WEBHOOK_LEASE_MS: z.coerce.number().int().min(1000).max(3_600_000).default(60_000),
  /** The terminal's web build served at /terminal/ (default: apps/terminal/dist/renderer). */
  TERMINAL_DIR: z.string().optional(),
  /** The console's build served at /console/ (default: apps/console/dist). */
  CONSOLE_DIR: z.string().optional(),
  /** Tests only: the sandbox gateway journals what it charged to this file (and reads it back). */
  SANDBOX_GATEWAY_JOURNAL: z.string().optional(),
  /** Tests only: the service's clock reads the instant written in this file. */
  KUPAH_CLOCK_FILE: z.string().optional(),
  /** 0 disables this instance's recurring scheduler (another instance charges). */
  SCHEDULER: z
    .enum(['0', '1', 'true', 'false', ''])
    .default('1')
    .transform((v) => v !== '0' && v !== 'false'),
  /** How often the recurring scheduler looks for due instalments when idle. */
  SCHEDULER_POLL_MS: z.coerce.number().int().min(50).max(3_600_000).default(30_000),
  /**
   * The key-encryption key sealing secrets kept in the database (organisations' gateway keys).
   * Unset: generated once into DATA_DIR/master-key (mode 600).
   */
  KUPAH_MASTER_KEY: masterKey,
  /** The key before the last rotation: still opens values sealed under it (until `secrets rewrap`). */
  KUPAH_MASTER_KEY_PREVIOUS: masterKey,
  /** A gateway call with no answer after this long is aborted; its payment stays Pending for recovery. */
  GATEWAY_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
  /** How long after an in-doubt call recovery first asks the gateway what happened. */
  GATEWAY_SETTLE_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  /** Gateway calls in flight at once for one organisation. */
  GATEWAY_CONCURRENCY_PER_ORG: z.coerce.number().int().min(1).max(100_000).default(256),
  /** Gateway calls in flight at once to one gateway, all organisations together. */
  GATEWAY_CONCURRENCY: z.coerce.number().int().min(1).max(100_000).default(1024),
  /** 0 disables this instance's payment recovery worker (another instance recovers). */
  RECOVERY: z
    .enum(['0', '1', 'true', 'false', ''])
    .default('1')
    .transform((v) => v !== '0' && v !== 'false'),
  /** How often the recovery worker looks for pending payments when idle. */
  RECOVERY_POLL_MS: z.coerce.number().int().min(50).max(3_600_000).default(5_000),
  /** Sandbox gateway only: the time every call takes (e.g. 300 for a typical card authorisation). */
  SANDBOX_GATEWAY_LATENCY_MS: z.coerce.number().int().min(0).max(600_000).default(0),
  /** Sandbox gateway only: `lost=0.05,timeout=0.01,unreachable=0.01,http-500=0.01`, or `hang`. */
  SANDBOX_GATEWAY_FAULTS: z.string().optional(),
  /** 0 disables this instance's webhook dispatcher (another instance sends). */
  WEBHOOK_DISPATCHER: z
    .enum(['0', '1', 'true', 'false', ''])
    .default('1')
    .transform((v) => v !== '0' && v !== 'false'),
  /**
   * Where receipt e-mails are sent: `smtp://user:pass@host:587` (STARTTLS when offered) or
   * `smtps://…:465`. Unset: no e-mail leaves this instance; receipts are still made and queued,
   * and can be downloaded.
   */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, 'must be an smtp:// or smtps:// URL')
    .optional()
    .or(z.literal('').transform(() => undefined)),
  /**
   * The server's public base URL as browsers reach it (e.g. https://donate.example.org): the
   * console's one-time links and pairing URLs are made on it. Unset: the request's origin (the
   * admin CLI's links: http(s)://localhost:PORT).
   */
  PUBLIC_URL: z
    .string()
    .trim()
    .optional()
    .transform((s) => (s ? s.replace(/\/+$/, '') : undefined))
    .pipe(
      z
        .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://donate.example.org' })
        .optional(),
    ),
  /** The From of receipt e-mails, e.g. `"Kupah receipts" <receipts@example.org>`. */
  RECEIPTS_FROM: z.string().trim().min(3).optional(),
  /** 0 disables this instance's receipt mailer (another instance sends). */
  RECEIPT_MAILER: z
    .enum(['0', '1', 'true', 'false', ''])
    .default('1')
    .transform((v) => v !== '0' && v !== 'false'),
  /** How long a claimed receipt e-mail is leased before another instance may send it (after a crash). */
  RECEIPT_LEASE_MS: z.coerce.number().int().min(1000).max(3_600_000).default(120_000),
  /** First retry delay of a receipt e-mail; doubled each attempt (tests make it short). */
  RECEIPT_RETRY_MS: z.coerce.number().int().min(10).max(3_600_000).default(60_000),
});

export type Config = z.infer<typeof env> & { dataDir: string };

/** Variables that let a test steer the server (its clock, the sandbox's faults): refused in production. */
export const TEST_HOOKS = [
  'KUPAH_CLOCK_FILE',
  'SANDBOX_GATEWAY_JOURNAL',
  'SANDBOX_GATEWAY_FAULTS',
  'SANDBOX_GATEWAY_LATENCY_MS',
] as const;

/** 127.0.0.0/8, ::1, localhost. */
export function isLoopback(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return (
    h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h)
  );
}

/** Combinations the schema cannot judge field by field. */
function crossChecks(c: z.infer<typeof env>, source: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  if (source.NODE_ENV === 'production') {
    const set = TEST_HOOKS.filter((k) => source[k] !== undefined && source[k]!.trim() !== '');
    if (set.length > 0) {
      problems.push(`${set.join(', ')}: test hooks are refused when NODE_ENV=production (unset them)`);
    }
  }
  if ((c.TLS_CERT_FILE === undefined) !== (c.TLS_KEY_FILE === undefined)) {
    problems.push('TLS_CERT_FILE and TLS_KEY_FILE: give both or neither');
  }
  if (!isLoopback(c.ADMIN_HOST)) {
    if (!c.ADMIN_ALLOW_REMOTE) {
      problems.push(
        `ADMIN_HOST: ${c.ADMIN_HOST} is not a loopback address; the admin API stays on loopback ` +
          'unless ADMIN_ALLOW_REMOTE=1 (then with TLS_CERT_FILE/TLS_KEY_FILE)',
      );
    } else if (c.TLS_CERT_FILE === undefined) {
      problems.push(
        'ADMIN_ALLOW_REMOTE=1 needs TLS_CERT_FILE and TLS_KEY_FILE (the admin token must not cross a network in clear)',
      );
    }
  }
  if (c.SMTP_URL !== undefined && c.RECEIPTS_FROM === undefined) {
    problems.push('SMTP_URL needs RECEIPTS_FROM (the From address of receipt e-mails)');
  }
  if (c.ADMIN_TLS && c.TLS_CERT_FILE === undefined) {
    problems.push('ADMIN_TLS=1 needs TLS_CERT_FILE and TLS_KEY_FILE');
  }
  if (c.ADMIN_PORT !== 0 && c.ADMIN_PORT === c.PORT) {
    problems.push('ADMIN_PORT: must differ from PORT (the admin API has its own listener)');
  }
  return problems;
}

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const parsed = env.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new Error(`Bad configuration: ${lines.join('; ')}`);
  }
  const problems = crossChecks(parsed.data, source);
  if (problems.length > 0) throw new Error(`Bad configuration: ${problems.join('; ')}`);
  // A relative DATA_DIR means relative to where npm was invoked (a workspace script runs elsewhere).
  const base = source.INIT_CWD ?? process.cwd();
  return { ...parsed.data, dataDir: resolve(base, parsed.data.DATA_DIR) };
}

/** ADMIN_TOKEN, or the token generated on first start into DATA_DIR/admin-token (mode 600). */
export function adminToken(config: Config): string {
  if (config.ADMIN_TOKEN) return config.ADMIN_TOKEN;
  const file = join(config.dataDir, 'admin-token');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(config.dataDir, { recursive: true });
  const token = `adm_${randomBytes(24).toString('hex')}`;
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}
