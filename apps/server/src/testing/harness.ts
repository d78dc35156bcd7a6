/**
 * Test harness: the real app on a real database (PGlite always; PostgreSQL when reachable), with
 * a settable clock. HTTP goes through `app.request()` (the real Hono app, no mocks) or, with
 * `listen()`, over real loopback HTTP.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import pg from 'pg';
import pino from 'pino';
import { type CreatedOrg, createOrg } from '../admin/admin-service.ts';
import { createAdminApp, createApp } from '../app.ts';
import { type Db, openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrations.ts';
import { installationSecret } from '../db/server-state.ts';
import type { Deps } from '../deps.ts';
import type { Gateway } from '../gateway/gateway.ts';
import { type GatewayCallPolicy, gatewayCalls } from '../gateway/gateway-calls.ts';
import { type GatewayRegistry, staticGatewayRegistry } from '../gateway/registry.ts';
import { sandboxGateway } from '../gateway/sandbox-gateway.ts';
import { createMetrics } from '../http/metrics.ts';

export type DbKind = 'pglite' | 'postgres';

export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let pgReachable: Promise<boolean> | undefined;

/**
 * PGlite always; PostgreSQL too when it answers. In CI (`CI=true`) PostgreSQL is required: its
 * tests are kept and fail when it is absent, never skipped silently.
 */
export async function testDatabases(): Promise<DbKind[]> {
  if (process.env.TEST_DATABASES) return process.env.TEST_DATABASES.split(',') as DbKind[];
  if (process.env.CI === 'true' || process.env.CI === '1') return ['pglite', 'postgres'];
  pgReachable ??= (async () => {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  })();
  return (await pgReachable) ? ['pglite', 'postgres'] : ['pglite'];
}

// biome-ignore lint/suspicious/noExplicitAny: test replies are read field by field; assertions check shapes.
export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export const ADMIN_TOKEN = 'test-admin-token-0123456789-abcdefghijklmnop';

export interface Harness {
  kind: DbKind;
  /** The schema this harness's tables live in (PostgreSQL: share it with a second pool). */
  schema: string;
  db: Db;
  deps: Deps;
  app: ReturnType<typeof createApp>;
  /** The admin listener's app (admin API, /metrics): not reachable through `app`. */
  adminApp: ReturnType<typeof createAdminApp>;
  org: CreatedOrg;
  clock: { now: Date; set(iso: string): void };
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  /** Admin API call with the admin token (on the admin app; `path` after /admin). */
  admin(method: string, path: string, body?: unknown): Promise<Reply>;
  /** A request to the admin app as given (full path, e.g. /metrics; no token unless in headers). */
  adminRequest(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Reply>;
  /** Serve on a random loopback port; returns the base URL. */
  listen(): Promise<string>;
  /** Serve the admin app on a random loopback port; returns its base URL (the CLI's --server). */
  listenAdmin(): Promise<string>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** The sandbox gateway (default: a fresh `sandboxGateway()`). */
  gateway?: Gateway;
  /** The registry (default: the sandbox for sandbox credentials, no production gateway). */
  gateways?: (db: Db) => GatewayRegistry;
  /** Gateway call policy (default: 5 s time-out, recovery may ask at once after it). */
  calls?: Partial<GatewayCallPolicy>;
}

export async function createHarness(kind: DbKind, opts: HarnessOptions = {}): Promise<Harness> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const db = await openDatabase(kind === 'postgres' ? { url: PG_URL, schema, poolSize: 60 } : { schema });
  await migrate(db);
  const clock = {
    now: new Date(),
    set(iso: string) {
      clock.now = new Date(iso);
    },
  };
  const deps: Deps = {
    db,
    gateways: opts.gateways ? opts.gateways(db) : staticGatewayRegistry(opts.gateway ?? sandboxGateway()),
    calls: gatewayCalls({ timeoutMs: 5_000, settleMs: 0, ...opts.calls }),
    now: () => clock.now,
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(),
    requestHashKey: await installationSecret(db, 'request_hash_key'),
  };
  const app = createApp(deps, {});
  // Test receivers are local http:// servers (as with WEBHOOK_ALLOW_PRIVATE=1).
  const adminApp = createAdminApp(deps, { adminToken: ADMIN_TOKEN, allowInsecureWebhooks: true });
  const org = await createOrg(db, 'Test Org');
  const servers: ReturnType<typeof serve>[] = [];
  const serveOn = async (target: { fetch: typeof app.fetch }) => {
    const server = serve({ fetch: target.fetch, port: 0, hostname: '127.0.0.1' });
    servers.push(server);
    await new Promise<void>((r) => server.once('listening', () => r()));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  const send = async (
    target: { request: typeof app.request },
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const res = await target.request(path, init);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {}
    return { status: res.status, body: parsed, headers: res.headers };
  };
  const request: Harness['request'] = (method, path, body, headers) => send(app, method, path, body, headers);
  const adminRequest: Harness['adminRequest'] = (method, path, body, headers) =>
    send(adminApp, method, path, body, headers);

  return {
    kind,
    schema,
    db,
    deps,
    app,
    adminApp,
    org,
    clock,
    request,
    admin: (method, path, body) =>
      adminRequest(method, `/admin${path}`, body, { authorization: `Bearer ${ADMIN_TOKEN}` }),
    adminRequest,
    listen: () => serveOn(app),
    listenAdmin: () => serveOn(adminApp),
    async close() {
      for (const server of servers) await new Promise<void>((r) => server.close(() => r()));
      if (kind === 'postgres') await db.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => {});
      await db.close();
    },
  };
}

/** A valid Charge body for the harness org; override any field. */
export function chargeBody(
  h: Pick<Harness, 'org'>,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    orgGUID: h.org.orgGuid,
    amount: 18,
    paymentMethodId: 'Credit_Card',
    uniqueTransactionId: `tx-${randomBytes(8).toString('hex')}`,
    currency: 'USD',
    card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
    ...over,
  };
}

export const sourceAuth = (h: Pick<Harness, 'org'>) => ({ authorization: h.org.sourceGuid });
export const keyAuth = (h: Pick<Harness, 'org'>) => ({ apikey: h.org.apiKey });
