/**
 * Attacks on the admin API: reaching it (or /metrics) through the public listener or another
 * address of the machine, guessing the token, acting without a trace, and steering a production
 * server through test hooks.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tokenActor } from '../admin/audit.ts';
import { tokenMatches } from '../admin/guard.ts';
import { type CliIo, run } from '../cli/admin-cli.ts';
import { loadConfig, TEST_HOOKS } from '../config.ts';
import { ADMIN_TOKEN, createHarness, type Harness, testDatabases } from '../testing/harness.ts';
import { restartablePort, type ServerProcess, startServerProcess } from '../testing/server-process.ts';

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
    env,
  };
  const code = await run(argv, io);
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {}
  // biome-ignore lint/suspicious/noExplicitAny: CLI answers are read field by field.
  return { code, stdout, stderr, json: json as any };
}

/** Whether a TCP connection to host:port is accepted (false: refused or nothing answers). */
function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port, timeout: 3_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('the admin API and /metrics listen on loopback only, apart from the public API (a real process)', {
  timeout: 120_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kupah-admin-sec-'));
  const token = `adm_${randomBytes(24).toString('hex')}`;
  let s: ServerProcess | undefined;
  beforeAll(async () => {
    // ADMIN_PORT=0: the kernel picks the port; the server logs the address it bound.
    s = await startServerProcess(await restartablePort(), {
      DATA_DIR: dir,
      DATABASE_URL: '',
      ADMIN_TOKEN: token,
      ADMIN_PORT: '0',
      ADMIN_HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    });
  }, 120_000);
  afterAll(async () => {
    await s?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('the public port answers 404 to every admin route and /metrics, even with the right token', async () => {
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const create = await fetch(`${s!.url}/admin/orgs`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'Intruder' }),
    });
    expect(create.status).toBe(404);
    expect(((await create.json()) as { error: { errorCode: string } }).error.errorCode).toBe('NOT_FOUND');
    expect((await fetch(`${s!.url}/admin/secrets`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${s!.url}/admin/audit`, { headers: auth })).status).toBe(404);
    expect((await fetch(`${s!.url}/metrics`)).status).toBe(404);
    // The admin listener does answer them.
    expect((await fetch(`${s!.adminUrl}/admin/secrets`, { headers: auth })).status).toBe(200);
    expect((await fetch(`${s!.adminUrl}/metrics`)).status).toBe(200);
  });

  it('both addresses are logged; the admin listener is bound to 127.0.0.1 and refuses other addresses of the machine', async () => {
    const lines = s!
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const admin = lines.find((l) => typeof l.adminUrl === 'string');
    const pub = lines.find((l) => typeof l.url === 'string' && String(l.msg).startsWith('listening on'));
    expect(admin).toMatchObject({
      adminAddress: '127.0.0.1',
      msg: `admin API listening on ${admin!.adminUrl}`,
    });
    expect(pub?.url).toBe(s!.url);
    const adminPort = Number(admin!.adminPort);
    expect(adminPort).toBeGreaterThan(0);
    expect(s!.adminUrl).toBe(`http://127.0.0.1:${adminPort}`);
    expect(await connects('127.0.0.1', adminPort)).toBe(true);

    const external = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && !a.internal && a.family === 'IPv4')
      .map((a) => a!.address);
    if (external.length === 0) {
      console.warn('this machine has no non-loopback IPv4 address: only the bound address was checked');
    }
    for (const address of external) expect(await connects(address, adminPort), address).toBe(false);
  });
});

describe.each(await testDatabases())('admin API attacks on %s', (kind) => {
  let h: Harness;
  let adminUrl: string;
  let publicUrl: string;
  const warnings: Record<string, unknown>[] = [];
  beforeAll(async () => {
    h = await createHarness(kind);
    // Capture what the admin door logs (the harness's logger is silent).
    h.deps.logger = pino(
      { level: 'warn' },
      new Writable({
        write(chunk, _enc, done) {
          warnings.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    );
    adminUrl = await h.listenAdmin();
    publicUrl = await h.listen();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('the public app has no admin routes and no /metrics', async () => {
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    expect((await h.request('POST', '/admin/orgs', { name: 'x' }, auth)).status).toBe(404);
    expect((await h.request('GET', `/admin/orgs/${h.org.orgGuid}`, undefined, auth)).status).toBe(404);
    expect((await h.request('GET', '/metrics')).status).toBe(404);
    expect((await fetch(`${publicUrl}/admin/orgs/${h.org.orgGuid}`, { headers: auth })).status).toBe(404);
  });

  it('the token is compared whole: prefixes, extensions, one changed character and other schemes are refused', () => {
    const last = ADMIN_TOKEN.at(-1) === 'a' ? 'b' : 'a';
    for (const header of [
      undefined,
      '',
      'Bearer ',
      `Bearer ${ADMIN_TOKEN.slice(0, -1)}`,
      `Bearer ${ADMIN_TOKEN}x`,
      `Bearer ${ADMIN_TOKEN.slice(0, -1)}${last}`,
      `Basic ${ADMIN_TOKEN}`,
      ADMIN_TOKEN,
    ]) {
      expect(tokenMatches(header, ADMIN_TOKEN), String(header)).toBe(false);
    }
    expect(tokenMatches(`Bearer ${ADMIN_TOKEN}`, ADMIN_TOKEN)).toBe(true);
    expect(tokenMatches(`bearer  ${ADMIN_TOKEN}`, ADMIN_TOKEN)).toBe(true);
  });

  it('every admin change is in the audit log: who (a token fingerprint), what, when, from where, outcome; no secret in it', async () => {
    h.clock.set('2026-03-01T10:00:00.000Z');
    const env = { ADMIN_TOKEN };
    const created = await cli(
      ['org', 'create', '--name', 'Audited Org', '--server', adminUrl, '--json'],
      env,
    );
    expect(created.code).toBe(0);
    const orgGuid = created.json.orgGuid as string;
    h.clock.set('2026-03-01T10:05:00.000Z');
    const gatewayKey = `sola_${randomBytes(16).toString('hex')}`;
    // No key-encryption key in the harness: refused (503), and audited as a failure all the same.
    const gateway = await cli(
      ['org', 'gateway', '--org', orgGuid, '--provider', 'sola', '--server', adminUrl],
      {
        ...env,
        GATEWAY_KEY: gatewayKey,
      },
    );
    const settings = await cli(
      [
        'org',
        'settings',
        '--org',
        orgGuid,
        '--payment-webhook',
        'https://hooks.example/p',
        '--server',
        adminUrl,
      ],
      env,
    );
    expect(settings.code).toBe(0);
    // Reading an org is not an action; reading key state is.
    expect((await cli(['org', 'show', '--org', orgGuid, '--server', adminUrl], env)).code).toBe(0);
    const keys = await fetch(`${adminUrl}/admin/envelope-keys`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(keys.status).toBe(200);

    const list = await cli(['audit', 'list', '--org', orgGuid, '--server', adminUrl, '--json'], env);
    expect(list.code).toBe(0);
    const entries = list.json.entries as Record<string, unknown>[];
    expect(entries.map((e) => `${e.method} ${e.route}`)).toEqual([
      'PATCH /admin/orgs/:org/settings',
      'PUT /admin/orgs/:org/gateway',
    ]);
    const [patch, put] = entries;
    expect(patch).toMatchObject({
      at: '2026-03-01T10:05:00.000Z',
      actor: tokenActor(ADMIN_TOKEN),
      method: 'PATCH',
      path: `/admin/orgs/${orgGuid}/settings`,
      orgGuid,
      summary: { body: { paymentWebhook: 'https://hooks.example/p' } },
      remoteAddr: '127.0.0.1',
      userAgent: 'kupah-admin-cli',
      status: 200,
      outcome: 'ok',
    });
    expect(put).toMatchObject({
      summary: { body: { provider: 'sola', key: '[redacted]' } },
      status: gateway.code === 0 ? 200 : expect.any(Number),
      outcome: gateway.code === 0 ? 'ok' : 'failed',
    });
    expect(tokenActor(ADMIN_TOKEN)).toMatch(/^admin token sha256:[0-9a-f]{12}$/);

    // The creation (no org in its route) and the secrets read are in the unfiltered log.
    const all = await cli(['audit', 'list', '--server', adminUrl, '--json'], env);
    const routes = (all.json.entries as Record<string, unknown>[]).map((e) => `${e.method} ${e.route}`);
    expect(routes).toContain('POST /admin/orgs');
    expect(routes).toContain('GET /admin/envelope-keys');
    expect(routes).not.toContain('GET /admin/orgs/:org');
    const creation = (all.json.entries as Record<string, unknown>[]).find((e) => e.route === '/admin/orgs');
    expect(creation).toMatchObject({
      at: '2026-03-01T10:00:00.000Z',
      summary: { body: { name: 'Audited Org' } },
    });
    // --since filters by time.
    const since = await cli(
      ['audit', 'list', '--since', '2026-03-01T10:01:00Z', '--server', adminUrl, '--json'],
      env,
    );
    expect((since.json.entries as { route: string }[]).some((e) => e.route === '/admin/orgs')).toBe(false);

    const raw = JSON.stringify(all.json) + JSON.stringify(await h.db.query('SELECT * FROM admin_audit'));
    expect(raw).not.toContain(gatewayKey);
    expect(raw).not.toContain(ADMIN_TOKEN);
  });

  it('a refused attempt (wrong token) is logged as a failure, without the token it tried', async () => {
    h.clock.set('2026-03-02T09:00:00.000Z');
    const guess = `guess_${randomBytes(20).toString('hex')}`;
    const r = await fetch(`${adminUrl}/admin/orgs`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${guess}`,
        'content-type': 'application/json',
        'user-agent': 'attacker/1',
      },
      body: JSON.stringify({ name: 'Nope' }),
    });
    expect(r.status).toBe(401);
    const list = await cli(
      ['audit', 'list', '--since', '2026-03-02T09:00:00Z', '--server', adminUrl, '--json'],
      {
        ADMIN_TOKEN,
      },
    );
    const refused = (list.json.entries as Record<string, unknown>[]).filter((e) => e.outcome === 'refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({
      at: '2026-03-02T09:00:00.000Z',
      actor: 'unauthenticated',
      method: 'POST',
      path: '/admin/orgs',
      remoteAddr: '127.0.0.1',
      userAgent: 'attacker/1',
      status: 401,
    });
    expect(JSON.stringify(await h.db.query('SELECT * FROM admin_audit'))).not.toContain(guess);
    expect(warnings.some((w) => w.msg === 'admin API: wrong or missing token')).toBe(true);
  });

  it('ten wrong tokens in a minute lock the address out (429, even with the right token) for 15 minutes, logged', async () => {
    h.clock.set('2026-03-03T12:00:00.000Z');
    const call = (token: string) =>
      fetch(`${adminUrl}/admin/orgs/${h.org.orgGuid}`, { headers: { authorization: `Bearer ${token}` } });
    expect((await call(ADMIN_TOKEN)).status).toBe(200);
    for (let i = 0; i < 9; i++) expect((await call(`wrong-${i}-${'x'.repeat(40)}`)).status).toBe(401);
    expect(warnings.some((w) => String(w.msg).includes('locked out'))).toBe(false);
    expect((await call(`wrong-9-${'x'.repeat(40)}`)).status).toBe(401);
    expect(warnings.find((w) => String(w.msg).includes('locked out'))).toMatchObject({ remote: '127.0.0.1' });

    const locked = await call(ADMIN_TOKEN);
    expect(locked.status).toBe(429);
    expect(locked.headers.get('retry-after')).toBe('900');
    expect(((await locked.json()) as { error: { errorCode: string } }).error.errorCode).toBe('RATE_LIMITED');
    h.clock.set('2026-03-03T12:14:59.000Z');
    expect((await call(ADMIN_TOKEN)).status).toBe(429);
    h.clock.set('2026-03-03T12:15:00.000Z');
    expect((await call(ADMIN_TOKEN)).status).toBe(200);

    const rows = await h.db.query<{ status: number; outcome: string }>(
      `SELECT status, outcome FROM admin_audit WHERE at >= '2026-03-03T12:00:00Z' ORDER BY id`,
    );
    expect(rows.filter((r) => Number(r.status) === 401 && r.outcome === 'refused')).toHaveLength(10);
    expect(rows.filter((r) => Number(r.status) === 429 && r.outcome === 'refused')).toHaveLength(2);
  });

  it('failures spread out over more than a minute do not lock the address out', async () => {
    for (let i = 0; i < 12; i++) {
      h.clock.set(new Date(Date.parse('2026-03-04T00:00:00Z') + i * 7_000).toISOString());
      const r = await fetch(`${adminUrl}/admin/orgs/${h.org.orgGuid}`, {
        headers: { authorization: `Bearer wrong-${'y'.repeat(40)}` },
      });
      expect(r.status).toBe(401);
    }
  });
});

describe('configuration refuses what would expose the admin API or steer a production server', () => {
  const base = { DATA_DIR: './data' };

  it('an admin token under 32 characters is refused; 32 is accepted', () => {
    expect(() => loadConfig({ ...base, ADMIN_TOKEN: 'x'.repeat(31) })).toThrow(
      /ADMIN_TOKEN: must be at least 32 characters/,
    );
    expect(loadConfig({ ...base, ADMIN_TOKEN: 'x'.repeat(32) }).ADMIN_TOKEN).toBe('x'.repeat(32));
  });

  it('a non-loopback ADMIN_HOST needs ADMIN_ALLOW_REMOTE=1 and TLS', () => {
    expect(loadConfig(base)).toMatchObject({ ADMIN_HOST: '127.0.0.1', ADMIN_PORT: 8788 });
    for (const host of ['0.0.0.0', '::', '192.0.2.2', 'example.org']) {
      expect(() => loadConfig({ ...base, ADMIN_HOST: host }), host).toThrow(
        /ADMIN_HOST: .* is not a loopback address.*ADMIN_ALLOW_REMOTE=1/,
      );
    }
    for (const host of ['127.0.0.1', '127.0.0.53', '::1', 'localhost']) {
      expect(loadConfig({ ...base, ADMIN_HOST: host }).ADMIN_HOST).toBe(host);
    }
    expect(() => loadConfig({ ...base, ADMIN_HOST: '0.0.0.0', ADMIN_ALLOW_REMOTE: '1' })).toThrow(
      /ADMIN_ALLOW_REMOTE=1 needs TLS_CERT_FILE and TLS_KEY_FILE/,
    );
    const remote = loadConfig({
      ...base,
      ADMIN_HOST: '0.0.0.0',
      ADMIN_ALLOW_REMOTE: '1',
      TLS_CERT_FILE: '/x/cert.pem',
      TLS_KEY_FILE: '/x/key.pem',
    });
    expect(remote.ADMIN_ALLOW_REMOTE).toBe(true);
    expect(() => loadConfig({ ...base, PORT: '9000', ADMIN_PORT: '9000' })).toThrow(
      /ADMIN_PORT: must differ/,
    );
  });

  it.each(TEST_HOOKS)('NODE_ENV=production refuses the test hook %s', (hook) => {
    const value =
      hook === 'SANDBOX_GATEWAY_LATENCY_MS' ? '0' : hook === 'SANDBOX_GATEWAY_FAULTS' ? 'hang' : '/tmp/x';
    expect(() => loadConfig({ ...base, NODE_ENV: 'production', [hook]: value })).toThrow(
      new RegExp(`${hook}: test hooks are refused when NODE_ENV=production`),
    );
    expect(() => loadConfig({ ...base, [hook]: value })).not.toThrow();
    expect(() => loadConfig({ ...base, NODE_ENV: 'production' })).not.toThrow();
  });

  it('a production server given a clock file refuses to start, with one line', {
    timeout: 120_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kupah-prod-hooks-'));
    try {
      const start = startServerProcess(await restartablePort(), {
        NODE_ENV: 'production',
        KUPAH_CLOCK_FILE: join(dir, 'clock'),
        DATA_DIR: dir,
        DATABASE_URL: '',
      });
      await expect(start).rejects.toThrow(/the server did not start/);
      const message = String(await start.catch((e: Error) => e.message));
      const lines = message.split('\n').filter(Boolean);
      expect(lines.slice(1)).toEqual([
        'Bad configuration: KUPAH_CLOCK_FILE: test hooks are refused when NODE_ENV=production (unset them)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
