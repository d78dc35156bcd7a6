/**
 * Console sign-in and sessions through the real app and database: sign-in answers, lockout,
 * session fixation, CSRF, cookie flags, session limits, sign-out, password change, the stored hash
 * and the audit trail of sign-ins.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { createApp } from '../app.ts';
import { consoleSignIn, consoleSignInAs } from '../testing/console-session.ts';
import { createHarness, type Harness, type Reply, testDatabases } from '../testing/harness.ts';
import { TEST_SCRYPT_PARAMS, useScryptParamsForTests } from './password.ts';
import { createUser, orgIdOf, purgeConsoleRecords } from './users-service.ts';

const cookieOf = (r: Reply): string | undefined =>
  /(?:^|,\s*)kupah_console=([^;]*)/.exec(r.headers.get('set-cookie') ?? '')?.[1];

describe.each(await testDatabases())('console sign-in and sessions on %s', (kind) => {
  let h: Harness;
  let n = 0;
  /** A new user of the harness org with a known password. */
  const newUser = async (role: 'owner' | 'manager' | 'viewer' = 'viewer') => {
    const email = `user${++n}-${kind}@Example.org`;
    const password = `correct horse ${n} battery`;
    await createUser(h.deps, await orgIdOf(h.db, h.org.orgGuid), { email, role, password }, 'http://x');
    // Stored (and shown) normalised: lower case.
    return { email: email.toLowerCase(), password };
  };
  const signIn = (body: unknown, headers: Record<string, string> = {}) =>
    h.request('POST', '/console/api/session', body, headers);
  const get = (path: string, cookie?: string) =>
    h.request('GET', `/console/api${path}`, undefined, cookie ? { cookie: `kupah_console=${cookie}` } : {});

  beforeAll(async () => {
    h = await createHarness(kind);
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(async () => {
    // Every app.request() has no socket: all share the address key "unknown".
    await h.db.query('DELETE FROM console_signin_failures');
  });

  it('signs in: 200 {user, csrfToken} and the cookie; GET /session with it; answers are not cached', async () => {
    const { email, password } = await newUser('manager');
    const r = await signIn({ email: email.toUpperCase(), password });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      user: {
        userId: expect.any(Number),
        email,
        name: null,
        role: 'manager',
        orgGuid: h.org.orgGuid,
        orgName: 'Test Org',
      },
      csrfToken: expect.stringMatching(/^[\w-]{43}$/),
    });
    expect(r.headers.get('cache-control')).toBe('no-store');
    const token = cookieOf(r)!;
    expect(token).toMatch(/^[\w-]{43}$/);
    const s = await get('/session', token);
    expect(s.status).toBe(200);
    expect(s.body).toEqual(r.body);
    expect(s.headers.get('cache-control')).toBe('no-store');
    // The database keeps the token's SHA-256, never the token.
    const rows = await h.db.query<{ id: string }>('SELECT id FROM console_sessions');
    expect(rows.map((x) => x.id)).not.toContain(token);
    expect(rows.some((x) => /^[0-9a-f]{64}$/.test(x.id))).toBe(true);
  });

  it('a wrong password and an unknown e-mail answer alike (and both verify a hash)', async () => {
    // Timing needs production's hash cost (this file hashes cheaply: testing/console-session.ts).
    useScryptParamsForTests(null);
    onTestFinished(() => useScryptParamsForTests(TEST_SCRYPT_PARAMS));
    const { email, password } = await newUser();
    const time = async (body: unknown) => {
      let best = Number.POSITIVE_INFINITY;
      let last: Reply | undefined;
      for (let i = 0; i < 2; i++) {
        const t = performance.now();
        last = await signIn(body);
        best = Math.min(best, performance.now() - t);
      }
      return { r: last!, ms: best };
    };
    const wrong = await time({ email, password: `${password}x` });
    const unknown = await time({ email: `nobody-${kind}@example.org`, password });
    for (const x of [wrong, unknown]) {
      expect(x.r.status).toBe(401);
      expect(x.r.headers.get('set-cookie')).toBeNull();
    }
    expect(unknown.r.body).toEqual(wrong.r.body);
    expect(wrong.r.body.error.errorCode).toBe('INVALID_CREDENTIALS');
    // Without the dummy hash an unknown e-mail would answer in ~1 ms against ~100 ms.
    expect(unknown.ms).toBeGreaterThan(wrong.ms * 0.4);
    // A 401 here carries a challenge no browser prompts for.
    expect(wrong.r.headers.get('www-authenticate')).toBe('Session realm="kupah-console"');
  });

  it('locks an e-mail out after 5 failures in 15 minutes (429 LOCKED_OUT, Retry-After), known or not; recovers after the lock', async () => {
    const { email, password } = await newUser();
    const ghost = `ghost-${kind}@example.org`;
    const start = new Date('2030-01-01T10:00:00Z');
    h.clock.set(start.toISOString());
    for (let i = 0; i < 5; i++) {
      expect((await signIn({ email, password: 'wrong password!' })).status).toBe(401);
      expect((await signIn({ email: ghost, password: 'wrong password!' })).status).toBe(401);
      await h.db.query("DELETE FROM console_signin_failures WHERE key LIKE 'addr:%'");
    }
    const locked = await signIn({ email, password }); // the right password, refused
    const lockedGhost = await signIn({ email: ghost, password });
    expect(locked.status).toBe(429);
    expect(locked.body.error.errorCode).toBe('LOCKED_OUT');
    expect(locked.headers.get('retry-after')).toBe(String(15 * 60));
    expect(lockedGhost.status).toBe(429);
    expect(lockedGhost.body).toEqual(locked.body);
    expect(lockedGhost.headers.get('retry-after')).toBe(locked.headers.get('retry-after'));
    expect(locked.headers.get('set-cookie')).toBeNull();
    // Lockout lives in the database (every instance shares it).
    expect(
      (await h.db.query('SELECT key FROM console_signin_failures WHERE locked_until IS NOT NULL')).length,
    ).toBeGreaterThanOrEqual(2);
    h.clock.set(new Date(start.getTime() + 10 * 60_000).toISOString());
    const still = await signIn({ email, password });
    expect(still.status).toBe(429);
    expect(Number(still.headers.get('retry-after'))).toBe(5 * 60);
    h.clock.set(new Date(start.getTime() + 15 * 60_000 + 1000).toISOString());
    expect((await signIn({ email, password })).status).toBe(200);
    h.clock.set(new Date().toISOString());
  });

  it('the lockout is shared by every instance (it lives in the database)', async () => {
    const { email, password } = await newUser();
    const other = createApp(h.deps, {}); // a second instance on the same database
    const viaOther = (body: unknown) =>
      other.request('/console/api/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    for (let i = 0; i < 5; i++) {
      const r =
        i % 2 === 0
          ? await signIn({ email, password: 'not the password' })
          : await viaOther({ email, password: 'not the password' });
      expect(r.status).toBe(401);
    }
    expect((await viaOther({ email, password })).status).toBe(429);
    expect((await signIn({ email, password })).status).toBe(429);
  });

  it('failures older than the 15-minute window do not add up', async () => {
    const { email, password } = await newUser();
    const start = new Date('2030-02-01T10:00:00Z');
    for (let i = 0; i < 8; i++) {
      h.clock.set(new Date(start.getTime() + i * 4 * 60_000).toISOString());
      expect((await signIn({ email, password: 'nope nope nope' })).status).toBe(401);
      // The window restarts every 4th failure: 4 failures in one window at most.
      if (i % 4 === 3) h.clock.set(new Date(start.getTime() + (i + 4) * 4 * 60_000).toISOString());
    }
    expect((await signIn({ email, password })).status).toBe(200);
    h.clock.set(new Date().toISOString());
  });

  it('locks out an address after 20 failures, whatever the e-mails', async () => {
    const app = createApp(h.deps, { console: { trustProxy: true } });
    const from = (ip: string, body: unknown) =>
      app.request('/console/api/session', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
        body: JSON.stringify(body),
      });
    const { email, password } = await newUser();
    for (let i = 0; i < 20; i++) {
      expect(
        (await from('203.0.113.7', { email: `spray${i}@example.org`, password: 'x'.repeat(12) })).status,
      ).toBe(401);
    }
    const refused = await from('203.0.113.7', { email, password });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { errorCode: string } }).error.errorCode).toBe('LOCKED_OUT');
    expect((await from('198.51.100.1', { email, password })).status).toBe(200);
  });

  it('session fixation: a cookie sent before sign-in is never the one after, and stops working', async () => {
    const { email, password } = await newUser();
    const first = cookieOf(await signIn({ email, password }))!;
    expect((await get('/session', first)).status).toBe(200);
    // A browser carrying a (planted or earlier) session signs in: a new id, the old one ends.
    const again = await signIn({ email, password }, { cookie: `kupah_console=${first}` });
    expect(again.status).toBe(200);
    const second = cookieOf(again)!;
    expect(second).not.toBe(first);
    expect((await get('/session', first)).status).toBe(401);
    expect((await get('/session', second)).status).toBe(200);
    // A made-up cookie value is not honoured, not adopted at sign-in.
    const planted = 'A'.repeat(43);
    expect((await get('/session', planted)).status).toBe(401);
    const third = await signIn({ email, password }, { cookie: `kupah_console=${planted}` });
    expect(cookieOf(third)).not.toBe(planted);
    expect((await get('/session', planted)).status).toBe(401);
  });

  it('cookie flags: HttpOnly, SameSite=Strict, Path=/console; Secure only when served over TLS', async () => {
    const { email, password } = await newUser();
    const plain = (await signIn({ email, password })).headers.get('set-cookie')!;
    expect(plain).toMatch(/^kupah_console=[\w-]{43}; /);
    expect(plain).toContain('HttpOnly');
    expect(plain).toContain('SameSite=Strict');
    expect(plain).toContain('Path=/console;');
    expect(plain).not.toContain('Secure');
    const tls = createApp(h.deps, { hsts: true });
    const res = await tls.request('/console/api/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    expect(res.status).toBe(200);
    const secure = res.headers.get('set-cookie')!;
    expect(secure).toMatch(/; Secure(;|$)/);
    expect(secure).toContain('HttpOnly');
    expect(secure).toContain('SameSite=Strict');
  });

  it('CSRF: without the token, with a wrong one, or from another site → 403 CSRF_REFUSED and nothing changes', async () => {
    const s = await consoleSignIn(h, { role: 'viewer' });
    const count = async () =>
      Number(
        (
          await h.db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM console_sessions WHERE user_id = $1',
            [s.user.userId],
          )
        )[0]!.n,
      );
    expect(await count()).toBe(1);
    const attempts: Record<string, string>[] = [
      { 'x-csrf-token': '' },
      { 'x-csrf-token': 'not-the-token' },
      { 'x-csrf-token': s.csrfToken.slice(0, -1) },
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ];
    for (const headers of attempts) {
      const r = await s.request('POST', '/session/sign-out-everywhere', undefined, headers);
      expect(r.status, JSON.stringify(headers)).toBe(403);
      expect(r.body.error.errorCode).toBe('CSRF_REFUSED');
    }
    // No header at all (not even an empty one).
    const bare = await h.request(
      'POST',
      '/console/api/password',
      { currentPassword: s.password, newPassword: 'a new password 123' },
      { cookie: s.cookie },
    );
    expect(bare.status).toBe(403);
    expect(bare.body.error.errorCode).toBe('CSRF_REFUSED');
    // A cross-site form post (text/plain or urlencoded) with the right token still refused.
    const form = await s.request('POST', '/password', 'currentPassword=x', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(403);
    expect(await count()).toBe(1);
    expect((await s.request('GET', '/session')).status).toBe(200);
    await consoleSignInAs(h, s.email, s.password); // the password did not change
    // Sign-in itself from another site is refused (login CSRF).
    const cross = await signIn({ email: s.email, password: s.password }, { origin: 'https://evil.example' });
    expect(cross.status).toBe(403);
    expect(cross.body.error.errorCode).toBe('CSRF_REFUSED');
    // With the token, from its own origin, it works.
    const ok = await s.request('POST', '/session/sign-out-everywhere', undefined, {
      origin: 'http://localhost',
      'sec-fetch-site': 'same-origin',
    });
    expect(ok.status).toBe(200);
    expect(await count()).toBe(0);
  });

  it('sign-out ends this session only; sign-out everywhere ends them all', async () => {
    const { email, password } = await newUser();
    const a = await consoleSignInAs(h, email, password);
    const b = await consoleSignInAs(h, email, password);
    const c = await consoleSignInAs(h, email, password);
    const out = await a.request('DELETE', '/session');
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/^kupah_console=; Path=\/console; Max-Age=0/);
    expect((await a.request('GET', '/session')).status).toBe(401);
    expect((await b.request('GET', '/session')).status).toBe(200);
    const all = await b.request('POST', '/session/sign-out-everywhere');
    expect(all.status).toBe(200);
    expect(all.body.sessionsEnded).toBe(2);
    expect((await b.request('GET', '/session')).status).toBe(401);
    expect((await c.request('GET', '/session')).status).toBe(401);
  });

  it('password change: wrong current → 403; weak → 400; ends the other sessions, keeps this one', async () => {
    const { email, password } = await newUser();
    const a = await consoleSignInAs(h, email, password);
    const b = await consoleSignInAs(h, email, password);
    const wrong = await a.request('POST', '/password', {
      currentPassword: 'not it at all',
      newPassword: 'another fine password',
    });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.errorCode).toBe('INVALID_CREDENTIALS');
    for (const weak of ['short', email, 'x'.repeat(201)]) {
      const r = await a.request('POST', '/password', { currentPassword: password, newPassword: weak });
      expect(r.status, weak).toBe(400);
    }
    const ok = await a.request('POST', '/password', {
      currentPassword: password,
      newPassword: 'another fine password',
    });
    expect(ok.status).toBe(200);
    expect((await a.request('GET', '/session')).status).toBe(200);
    expect((await b.request('GET', '/session')).status).toBe(401);
    expect((await signIn({ email, password })).status).toBe(401);
    await consoleSignInAs(h, email, 'another fine password');
  });

  it('sessions end after 12 idle hours and 7 days after sign-in', async () => {
    const { email, password } = await newUser();
    const t0 = new Date('2030-03-01T08:00:00Z').getTime();
    const at = (ms: number) => h.clock.set(new Date(t0 + ms).toISOString());
    const HOUR = 3_600_000;
    at(0);
    const s = await consoleSignInAs(h, email, password);
    at(11 * HOUR);
    expect((await s.request('GET', '/session')).status).toBe(200);
    at(22 * HOUR); // 11 h after the last request
    expect((await s.request('GET', '/session')).status).toBe(200);
    at(34 * HOUR + 1000); // 12 h idle
    const idle = await s.request('GET', '/session');
    expect(idle.status).toBe(401);
    expect(idle.headers.get('set-cookie')).toContain('Max-Age=0');
    at(0);
    const t = await consoleSignInAs(h, email, password);
    for (let hours = 10; hours < 7 * 24; hours += 10) {
      at(hours * HOUR);
      expect((await t.request('GET', '/session')).status).toBe(200);
    }
    at(7 * 24 * HOUR);
    expect((await t.request('GET', '/session')).status).toBe(401);
    h.clock.set(new Date().toISOString());
  });

  it('housekeeping removes ended sessions and spent failure counters, keeps live ones', async () => {
    const { email, password } = await newUser();
    const t0 = new Date('2030-05-01T08:00:00Z').getTime();
    h.clock.set(new Date(t0).toISOString());
    const old = await consoleSignInAs(h, email, password);
    await signIn({ email, password: 'wrong wrong wrong' });
    h.clock.set(new Date(t0 + 13 * 3_600_000).toISOString());
    const live = await consoleSignInAs(h, email, password);
    const ids = async () =>
      (
        await h.db.query<{ user_id: string }>('SELECT user_id FROM console_sessions WHERE user_id = $1', [
          live.user.userId,
        ])
      ).length;
    expect(await ids()).toBe(2);
    expect(await purgeConsoleRecords(h.db, h.deps.now())).toBeGreaterThanOrEqual(2);
    expect(await ids()).toBe(1);
    expect((await live.request('GET', '/session')).status).toBe(200);
    expect((await old.request('GET', '/session')).status).toBe(401);
    expect(await h.db.query('SELECT key FROM console_signin_failures')).toEqual([]);
    h.clock.set(new Date().toISOString());
  });

  it("stores the password as salted scrypt with its parameters (production's by default: N=2^15, r=8, p=3): not the text, not a bare hash", async () => {
    const { createHash } = await import('node:crypto');
    // This file hashes with cheap parameters (testing/console-session.ts): production's here.
    useScryptParamsForTests(null);
    onTestFinished(() => useScryptParamsForTests(TEST_SCRYPT_PARAMS));
    const password = 'the same password for two';
    const orgId = await orgIdOf(h.db, h.org.orgGuid);
    await createUser(
      h.deps,
      orgId,
      { email: `same1-${kind}@example.org`, role: 'viewer', password },
      'http://x',
    );
    await createUser(
      h.deps,
      orgId,
      { email: `same2-${kind}@example.org`, role: 'viewer', password },
      'http://x',
    );
    const rows = await h.db.query<{ password_hash: string }>(
      "SELECT password_hash FROM console_users WHERE email LIKE 'same_-%' ORDER BY id",
    );
    expect(rows).toHaveLength(2);
    for (const { password_hash: stored } of rows) {
      expect(stored).toMatch(/^scrypt\$32768\$8\$3\$[\w-]{22}\$[\w-]{86}$/);
      expect(stored).not.toContain(password);
      for (const algo of ['md5', 'sha1', 'sha256', 'sha512']) {
        const bare = createHash(algo).update(password);
        const digest = bare.digest();
        expect(stored).not.toContain(digest.toString('hex'));
        expect(stored).not.toContain(digest.toString('base64url'));
      }
    }
    expect(rows[0]!.password_hash).not.toBe(rows[1]!.password_hash); // a salt per user
  });

  it('a sign-in re-hashes a password stored with older scrypt parameters', async () => {
    const { hashPassword } = await import('./password.ts');
    const { email, password } = await newUser();
    const old = await hashPassword(password, { N: 2 ** 14, r: 8, p: 1 });
    await h.db.query('UPDATE console_users SET password_hash = $2 WHERE lower(email) = lower($1)', [
      email,
      old,
    ]);
    await consoleSignInAs(h, email, password);
    const [row] = await h.db.query<{ password_hash: string }>(
      'SELECT password_hash FROM console_users WHERE lower(email) = lower($1)',
      [email],
    );
    expect(row!.password_hash).not.toBe(old);
    // Re-hashed with today's parameters (this file's cheap ones: testing/console-session.ts).
    expect(row!.password_hash).toMatch(/^scrypt\$1024\$8\$1\$/);
    await consoleSignInAs(h, email, password);
  });

  it('audits sign-ins (success and failure) and sign-outs with who, what and when, never the password', async () => {
    const { email, password } = await newUser();
    const when = new Date('2030-04-01T12:00:00Z');
    h.clock.set(when.toISOString());
    await signIn({ email, password: 'a wrong password' }, { 'user-agent': 'audit-test' });
    const s = await consoleSignInAs(h, email, password);
    await s.request('DELETE', '/session');
    const rows = await h.db.query<{
      actor: string;
      method: string;
      route: string;
      path: string;
      org_guid: string | null;
      summary: unknown;
      status: number;
      outcome: string;
      at: Date;
      user_agent: string | null;
    }>("SELECT * FROM admin_audit WHERE path LIKE '/console/api/session%' AND at = $1 ORDER BY id", [when]);
    const userId = s.user.userId;
    expect(rows.map((r) => [r.actor, r.method, r.route, r.status, r.outcome, String(r.org_guid)])).toEqual([
      [
        `unauthenticated (sign-in as ${email.toLowerCase()})`,
        'POST',
        '/console/api/session',
        401,
        'refused',
        h.org.orgGuid,
      ],
      [`console user ${email} (#${userId})`, 'POST', '/console/api/session', 200, 'ok', h.org.orgGuid],
      [`console user ${email} (#${userId})`, 'DELETE', '/console/api/session', 200, 'ok', h.org.orgGuid],
    ]);
    expect(rows[0]!.user_agent).toBe('audit-test');
    expect(new Date(rows[0]!.at).toISOString()).toBe(when.toISOString());
    const all = JSON.stringify(await h.db.query('SELECT * FROM admin_audit'));
    expect(all).not.toContain(password);
    expect(all).not.toContain('a wrong password');
    expect(JSON.stringify(rows[0]!.summary)).toContain('[redacted]');
    h.clock.set(new Date().toISOString());
  });
});
