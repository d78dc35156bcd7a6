/**
 * The findings of the console sign-in security review, one test each: e-mailed links never made on
 * the request's Host, the lockout counted before the password is checked (a parallel burst), one
 * lockout per account however the e-mail is spelled and per IPv6 /64, link tokens kept out of the
 * request log, the Secure cookie behind a TLS proxy, the last owner under concurrency, guesses of
 * the current password, links ended by a password change or a disable, the audit log not flooded
 * by strangers, a body without Content-Type, URL secrets in audit summaries, CSV exports audited.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { createOrg } from '../admin/admin-service.ts';
import { createApp } from '../app.ts';
import { type ConsoleSession, consoleSignIn, consoleSignInAs } from '../testing/console-session.ts';
import { createHarness, type Harness, testDatabases } from '../testing/harness.ts';
import { MAX_SUMMARY_CHARS } from './audit-trail.ts';
import { SCRYPT_CONCURRENCY, verifyPassword } from './password.ts';
import { addressKey, type LinkMailer, orgIdOf, patchUser } from './users-service.ts';

const tokenOf = (link: string): string => /\/console\/#\/link\/([\w-]{43})$/.exec(link)![1]!;
const json = { 'content-type': 'application/json' };

describe('lockout keys of client addresses', () => {
  it('IPv6 by its /64 (however written), IPv4-mapped as IPv4, IPv4 as it is', () => {
    expect(addressKey('2001:db8:1:2:aaaa::1')).toBe(addressKey('2001:0db8:0001:0002:bbbb:cccc:dddd:2'));
    expect(addressKey('2001:db8:1:2::1')).toBe('addr:2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:3::1')).not.toBe(addressKey('2001:db8:1:2::1'));
    expect(addressKey('::ffff:10.1.2.3')).toBe('addr:10.1.2.3');
    expect(addressKey('10.1.2.3')).toBe('addr:10.1.2.3');
    expect(addressKey('fe80::1%eth0')).toBe('addr:fe80:0:0:0::/64');
    expect(addressKey(null)).toBe('addr:unknown');
  });
});

describe('password checks at once', () => {
  it(`at most ${SCRYPT_CONCURRENCY} run and a few wait; a burst past that is refused (429), not queued`, async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, () => verifyPassword('a guess of a password', null)),
    );
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused.length).toBeGreaterThan(0);
    expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({ status: 429 });
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeGreaterThanOrEqual(SCRYPT_CONCURRENCY);
  });
});

describe.each(await testDatabases())('console sign-in review on %s', (kind) => {
  let h: Harness;
  let owner: ConsoleSession;
  let n = 0;
  const email = (what: string) => `${what}${++n}-${kind}@example.org`;
  const open = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    h.request(method, `/console/api${path}`, body, headers);

  beforeAll(async () => {
    h = await createHarness(kind);
    owner = await consoleSignIn(h, { role: 'owner', name: 'Olive Owner' });
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(async () => {
    await h.db.query('DELETE FROM console_signin_failures');
    h.clock.set(new Date().toISOString());
  });

  it('1. a reset e-mail is never made on the request Host: without PUBLIC_URL none is sent; with it the link is on PUBLIC_URL', async () => {
    const sent: Parameters<LinkMailer>[0][] = [];
    const mailer: LinkMailer = async (m) => {
      sent.push(m);
    };
    const victim = await consoleSignIn(h, { role: 'viewer' });
    const ask = (app: ReturnType<typeof createApp>) =>
      app.request('http://evil.example/console/api/password-reset', {
        method: 'POST',
        headers: { ...json, host: 'evil.example' },
        body: JSON.stringify({ email: victim.email }),
      });
    const noPublicUrl = createApp(h.deps, { console: { mailer } });
    expect((await ask(noPublicUrl)).status).toBe(202);
    // An owner's invitation through that app: the link is shown, not e-mailed.
    const invited = await noPublicUrl.request('http://evil.example/console/api/users', {
      method: 'POST',
      headers: { ...json, host: 'evil.example', cookie: owner.cookie, 'x-csrf-token': owner.csrfToken },
      body: JSON.stringify({ email: email('inv'), role: 'viewer' }),
    });
    expect(invited.status).toBe(201);
    await new Promise((r) => setTimeout(r, 50));
    expect(sent).toEqual([]);

    const withPublicUrl = createApp(h.deps, {
      console: { mailer, publicUrl: 'https://kupah.example.org/' },
    });
    expect((await ask(withPublicUrl)).status).toBe(202);
    await expect.poll(() => sent.length).toBe(1);
    expect(sent[0]!.to).toBe(victim.email);
    expect(sent[0]!.link.startsWith('https://kupah.example.org/console/#/link/')).toBe(true);
    expect(sent[0]!.link).not.toContain('evil.example');
  });

  it('2. the lockout cannot be raced: 30 parallel wrong sign-ins for one e-mail → at most 5 are checked (401), the rest 429', async () => {
    const user = await consoleSignIn(h, { role: 'viewer' });
    const answers = await Promise.all(
      Array.from({ length: 30 }, () =>
        open('POST', '/session', { email: user.email, password: 'not the password' }),
      ),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s !== 401).every((s) => s === 429)).toBe(true);
    // Locked even with the right password now.
    expect((await open('POST', '/session', { email: user.email, password: user.password })).status).toBe(429);
  });

  it('6. one lockout per account however the e-mail is spelled (case, spaces, Unicode composition)', async () => {
    const composed = `jos\u00e9${++n}-${kind}@example.org`;
    const user = await consoleSignIn(h, { role: 'viewer', email: composed });
    const decomposed = composed.normalize('NFD');
    expect(decomposed).not.toBe(composed);
    const spellings = [composed, decomposed, ` ${composed.toUpperCase()} `, decomposed, composed];
    for (const e of spellings) {
      expect((await open('POST', '/session', { email: e, password: 'not the password' })).status).toBe(401);
    }
    expect((await open('POST', '/session', { email: composed, password: user.password })).status).toBe(429);
    // Stored and found normalised: the decomposed spelling signs in to the same account.
    await h.db.query('DELETE FROM console_signin_failures');
    const again = await consoleSignInAs(h, decomposed, user.password);
    expect(again.user.userId).toBe(user.user.userId);
  });

  it('3. one-time link tokens are not written to the request log', async () => {
    const lines: string[] = [];
    const logger = h.deps.logger;
    h.deps.logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _enc, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    onTestFinished(() => {
      h.deps.logger = logger;
    });
    const created = await owner.request('POST', '/users', { email: email('logged'), role: 'viewer' });
    const token = tokenOf(created.body.link);
    expect((await open('GET', `/links/${token}`)).status).toBe(200);
    expect((await open('POST', `/links/${token}`, { password: 'a password for the log test' })).status).toBe(
      200,
    );
    const log = lines.join('');
    expect(log).toContain('/console/api/links/[token]');
    expect(log).not.toContain(token);
  });

  it('4. the cookie is Secure behind a TLS-terminating proxy: PUBLIC_URL https:, or TRUST_PROXY and X-Forwarded-Proto: https', async () => {
    const user = await consoleSignIn(h, { role: 'viewer' });
    const cookieFrom = async (app: ReturnType<typeof createApp>, headers: Record<string, string> = {}) => {
      const res = await app.request('/console/api/session', {
        method: 'POST',
        headers: { ...json, ...headers },
        body: JSON.stringify({ email: user.email, password: user.password }),
      });
      expect(res.status).toBe(200);
      return res.headers.get('set-cookie')!;
    };
    const secure = /; Secure(;|$)/;
    expect(
      await cookieFrom(createApp(h.deps, { console: { publicUrl: 'https://kupah.example.org' } })),
    ).toMatch(secure);
    expect(await cookieFrom(createApp(h.deps, { console: { publicUrl: 'http://kupah.local' } }))).not.toMatch(
      secure,
    );
    const proxied = createApp(h.deps, { console: { trustProxy: true } });
    expect(await cookieFrom(proxied, { 'x-forwarded-proto': 'https' })).toMatch(secure);
    expect(await cookieFrom(proxied)).not.toMatch(secure);
    // Not behind a trusted proxy: the header means nothing.
    expect(await cookieFrom(createApp(h.deps, {}), { 'x-forwarded-proto': 'https' })).not.toMatch(secure);
  });

  it('5. an invited owner without a password does not count as another owner', async () => {
    const org = await createOrg(h.db, 'Invited Owner Org');
    const solo = await consoleSignIn(h, { role: 'owner', orgGuid: org.orgGuid });
    const invited = await solo.request('POST', '/users', { email: email('invowner'), role: 'owner' });
    expect(invited.status).toBe(201);
    const demote = await solo.request('PATCH', `/users/${solo.user.userId}`, { role: 'viewer' });
    expect(demote.status).toBe(409);
    expect(demote.body.error.errorCode).toBe('INVALID_STATE');
  });

  it('5. two owners demoting and disabling each other at once: one of them stays owner', async () => {
    for (let round = 0; round < 3; round++) {
      const org = await createOrg(h.db, `Two Owners ${round}`);
      const a = await consoleSignIn(h, { role: 'owner', orgGuid: org.orgGuid });
      const b = await consoleSignIn(h, { role: 'owner', orgGuid: org.orgGuid });
      const orgId = await orgIdOf(h.db, org.orgGuid);
      const results = await Promise.allSettled([
        patchUser(h.deps, orgId, b.user.userId, { role: 'viewer' }),
        patchUser(h.deps, orgId, a.user.userId, { disabled: true }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const [left] = await h.db.query<{ n: string | number }>(
        `SELECT count(*) AS n FROM console_users WHERE org_id = $1 AND role = 'owner' AND disabled_at IS NULL`,
        [orgId],
      );
      expect(Number(left!.n)).toBe(1);
    }
  });

  it('7. wrong current passwords count under the lockout: the 6th guess → 429', async () => {
    const user = await consoleSignIn(h, { role: 'viewer' });
    for (let i = 0; i < 5; i++) {
      const r = await user.request('POST', '/password', {
        currentPassword: `guess number ${i}`,
        newPassword: 'a brand new password',
      });
      expect(r.status).toBe(403);
    }
    const sixth = await user.request('POST', '/password', {
      currentPassword: user.password,
      newPassword: 'a brand new password',
    });
    expect(sixth.status).toBe(429);
    expect(sixth.body.error.errorCode).toBe('LOCKED_OUT');
  });

  it('8. a password change and a disable end the user’s unused one-time links', async () => {
    const user = await consoleSignIn(h, { role: 'viewer' });
    const reset = await owner.request('POST', `/users/${user.user.userId}/reset`);
    const token = tokenOf(reset.body.link);
    const changed = await user.request('POST', '/password', {
      currentPassword: user.password,
      newPassword: 'changed before the link',
    });
    expect(changed.status).toBe(200);
    expect((await open('POST', `/links/${token}`, { password: 'taken over through the link' })).status).toBe(
      404,
    );

    const other = await consoleSignIn(h, { role: 'viewer' });
    const link2 = tokenOf((await owner.request('POST', `/users/${other.user.userId}/reset`)).body.link);
    expect((await owner.request('PATCH', `/users/${other.user.userId}`, { disabled: true })).status).toBe(
      200,
    );
    expect((await owner.request('PATCH', `/users/${other.user.userId}`, { disabled: false })).status).toBe(
      200,
    );
    expect((await open('POST', `/links/${link2}`, { password: 'taken over through the link' })).status).toBe(
      404,
    );
  });

  it('9. strangers cannot fill the audit log: unauthenticated changing requests elsewhere are not written; summaries are capped', async () => {
    for (let i = 0; i < 20; i++) {
      const r = await open('POST', '/nope', { filler: 'x'.repeat(1000) });
      expect(r.status).toBe(401);
    }
    expect(await h.db.query(`SELECT id FROM admin_audit WHERE path = '/console/api/nope'`)).toEqual([]);
    // Failed sign-ins are still written.
    await open('POST', '/session', { email: email('stranger'), password: 'not the password' });
    expect(
      (
        await h.db.query(
          `SELECT id FROM admin_audit WHERE path = '/console/api/session' AND outcome = 'refused'`,
        )
      ).length,
    ).toBeGreaterThan(0);
    // A signed-in request's summary is capped.
    const big = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`field${i}`, 'y'.repeat(300)]));
    await owner.request('POST', '/big-body', big);
    const [row] = await h.db.query<{ summary: unknown }>(
      `SELECT summary FROM admin_audit WHERE path = '/console/api/big-body'`,
    );
    const summary = typeof row!.summary === 'string' ? row!.summary : JSON.stringify(row!.summary);
    expect(summary.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
  });

  it('10. a changing request with a body but no Content-Type is refused', async () => {
    const body = new TextEncoder().encode(
      JSON.stringify({ email: 'a@example.org', password: 'whatever it is' }),
    );
    const res = await h.app.request('/console/api/session', {
      method: 'POST',
      headers: { 'content-length': String(body.length) },
      body,
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { errorCode: string } }).error.errorCode).toBe('CSRF_REFUSED');
    const signedIn = await h.app.request('/console/api/users', {
      method: 'POST',
      headers: {
        cookie: owner.cookie,
        'x-csrf-token': owner.csrfToken,
        'content-length': String(body.length),
      },
      body,
    });
    expect(signedIn.status).toBe(403);
  });

  it('11. URLs in audit summaries lose user-info and query; CSV exports are audited with their filters', async () => {
    const manager = await consoleSignIn(h, { role: 'manager' });
    await manager.request('PUT', '/webhooks/payment', {
      url: 'https://hookuser:hooksecret@hooks.example.org/in?token=querysecret',
    });
    const rows = JSON.stringify(
      await h.db.query(`SELECT summary FROM admin_audit WHERE path = '/console/api/webhooks/payment'`),
    );
    expect(rows).toContain('hooks.example.org/in');
    expect(rows).not.toContain('hooksecret');
    expect(rows).not.toContain('hookuser');
    expect(rows).not.toContain('querysecret');

    const csv = await manager.request('GET', '/payments.csv?from=2026-01-01T00:00:00Z');
    expect(csv.status).toBe(200);
    const [exported] = await h.db.query<{ actor: string; method: string; summary: unknown }>(
      `SELECT actor, method, summary FROM admin_audit WHERE path = '/console/api/payments.csv'`,
    );
    expect(exported).toBeDefined();
    expect(exported!.method).toBe('GET');
    expect(exported!.actor).toContain(manager.email);
    expect(JSON.stringify(exported!.summary)).toContain('2026-01-01');
  });
});
