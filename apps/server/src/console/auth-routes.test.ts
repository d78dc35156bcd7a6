/**
 * The console's people routes through the real app and database: roles, invitations and reset
 * links (single use, expiry), disabling, the last owner, other organisations, the audit view.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createOrg } from '../admin/admin-service.ts';
import { createApp } from '../app.ts';
import { type ConsoleSession, consoleSignIn, consoleSignInAs } from '../testing/console-session.ts';
import { createHarness, type Harness, testDatabases } from '../testing/harness.ts';
import type { LinkMailer } from './users-service.ts';

const tokenOf = (link: string): string => /\/console\/#\/link\/([\w-]{43})$/.exec(link)![1]!;

describe.each(await testDatabases())('console people on %s', (kind) => {
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

  it('roles: a viewer cannot list users, a manager cannot invite, a viewer cannot read the audit log', async () => {
    const viewer = await consoleSignIn(h, { role: 'viewer' });
    const manager = await consoleSignIn(h, { role: 'manager' });
    const v = await viewer.request('GET', '/users');
    expect(v.status).toBe(403);
    expect(v.body.error.errorCode).toBe('FORBIDDEN');
    const m = await manager.request('POST', '/users', { email: email('x'), role: 'viewer' });
    expect(m.status).toBe(403);
    expect(
      await h.db.query('SELECT 1 FROM console_users WHERE email = $1', [`x${n}-${kind}@example.org`]),
    ).toEqual([]);
    expect((await manager.request('GET', '/users')).status).toBe(403);
    expect((await manager.request('PATCH', `/users/${viewer.user.userId}`, { role: 'owner' })).status).toBe(
      403,
    );
    expect((await manager.request('POST', `/users/${viewer.user.userId}/reset`)).status).toBe(403);
    expect((await viewer.request('GET', '/audit')).status).toBe(403);
    expect((await manager.request('GET', '/audit')).status).toBe(200);
    expect((await owner.request('GET', '/users')).status).toBe(200);
    // Without a session at all: 401.
    expect((await open('GET', '/users')).status).toBe(401);
  });

  it('invitation: 201 {user, link}; the link says what it is for, sets the password and signs in, once; it expires after 7 days', async () => {
    const to = email('invitee');
    const r = await owner.request('POST', '/users', { email: to, role: 'manager', name: 'Ivy' });
    expect(r.status).toBe(201);
    expect(r.body.user).toMatchObject({
      email: to,
      role: 'manager',
      name: 'Ivy',
      invited: true,
      disabled: false,
    });
    expect(r.body.link).toMatch(/^http:\/\/localhost\/console\/#\/link\/[\w-]{43}$/);
    const token = tokenOf(r.body.link);
    // Stored as its hash only.
    expect(JSON.stringify(await h.db.query('SELECT * FROM console_links'))).not.toContain(token);
    const info = await open('GET', `/links/${token}`);
    expect(info.status).toBe(200);
    expect(info.body).toEqual({ kind: 'invitation', email: to, orgName: 'Test Org' });
    // Nobody can sign in to an invitation not yet accepted.
    expect((await open('POST', '/session', { email: to, password: '' })).status).toBe(400);
    expect((await open('POST', '/session', { email: to, password: 'anything at all' })).status).toBe(401);
    const weak = await open('POST', `/links/${token}`, { password: 'short' });
    expect(weak.status).toBe(400);
    const set = await open('POST', `/links/${token}`, { password: 'invited and chosen', name: 'Ivy I.' });
    expect(set.status).toBe(200);
    expect(set.body.user).toMatchObject({ email: to, role: 'manager', name: 'Ivy I.' });
    expect(set.headers.get('set-cookie')).toMatch(/^kupah_console=[\w-]{43};/);
    expect(set.body.csrfToken).toMatch(/^[\w-]{43}$/);
    // Single use.
    expect((await open('GET', `/links/${token}`)).status).toBe(404);
    expect((await open('POST', `/links/${token}`, { password: 'a second password' })).status).toBe(404);
    await consoleSignInAs(h, to, 'invited and chosen');
    // The audit entry of the link's use names no token.
    const audit = JSON.stringify(
      await h.db.query("SELECT * FROM admin_audit WHERE path LIKE '/console/api/links/%'"),
    );
    expect(audit).toContain('/console/api/links/[token]');
    expect(audit).not.toContain(token);
    expect(audit).not.toContain('invited and chosen');

    // An invitation expires after 7 days.
    const later = await owner.request('POST', '/users', { email: email('late'), role: 'viewer' });
    const lateToken = tokenOf(later.body.link);
    h.clock.set(new Date(Date.now() + 7 * 24 * 3_600_000 - 60_000).toISOString());
    expect((await open('GET', `/links/${lateToken}`)).status).toBe(200);
    h.clock.set(new Date(Date.now() + 7 * 24 * 3_600_000 + 60_000).toISOString());
    expect((await open('GET', `/links/${lateToken}`)).status).toBe(404);
    expect((await open('POST', `/links/${lateToken}`, { password: 'too late for this' })).status).toBe(404);
    // A made-up token: 404 too.
    expect((await open('GET', `/links/${'B'.repeat(43)}`)).status).toBe(404);
  });

  it('reset link: the owner makes one (1 hour); using it sets a new password and ends the old sessions', async () => {
    const user = await consoleSignIn(h, { role: 'viewer' });
    const r = await owner.request('POST', `/users/${user.user.userId}/reset`);
    expect(r.status).toBe(200);
    const token = tokenOf(r.body.link);
    expect((await open('GET', `/links/${token}`)).body).toMatchObject({ kind: 'reset', email: user.email });
    const set = await open('POST', `/links/${token}`, { password: 'brand new password' });
    expect(set.status).toBe(200);
    expect((await user.request('GET', '/session')).status).toBe(401);
    expect((await open('POST', '/session', { email: user.email, password: user.password })).status).toBe(401);
    await consoleSignInAs(h, user.email, 'brand new password');
    expect((await open('POST', `/links/${token}`, { password: 'brand new password 2' })).status).toBe(404);

    // Expires after an hour; a newer link replaces an older one.
    const a = tokenOf((await owner.request('POST', `/users/${user.user.userId}/reset`)).body.link);
    const b = tokenOf((await owner.request('POST', `/users/${user.user.userId}/reset`)).body.link);
    expect((await open('GET', `/links/${a}`)).status).toBe(404);
    h.clock.set(new Date(Date.now() + 3_600_000 + 1000).toISOString());
    expect((await open('GET', `/links/${b}`)).status).toBe(404);
  });

  it('disabling a user ends their sessions and refuses their sign-in; enabling lets them back', async () => {
    const user = await consoleSignIn(h, { role: 'manager' });
    const other = await consoleSignInAs(h, user.email, user.password);
    const d = await owner.request('PATCH', `/users/${user.user.userId}`, { disabled: true });
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ userId: user.user.userId, disabled: true });
    expect((await user.request('GET', '/session')).status).toBe(401);
    expect((await other.request('GET', '/session')).status).toBe(401);
    expect(
      (await h.db.query('SELECT 1 FROM console_sessions WHERE user_id = $1', [user.user.userId])).length,
    ).toBe(0);
    const refused = await open('POST', '/session', { email: user.email, password: user.password });
    expect(refused.status).toBe(401);
    expect(refused.body.error.errorCode).toBe('INVALID_CREDENTIALS');
    // A reset link is not made for a disabled user, and a live one stops working.
    expect((await owner.request('POST', `/users/${user.user.userId}/reset`)).status).toBe(409);
    expect((await owner.request('PATCH', `/users/${user.user.userId}`, { disabled: false })).status).toBe(
      200,
    );
    await consoleSignInAs(h, user.email, user.password);
    // A role change.
    const p = await owner.request('PATCH', `/users/${user.user.userId}`, { role: 'viewer' });
    expect(p.body.role).toBe('viewer');
    expect((await owner.request('PATCH', `/users/${user.user.userId}`, {})).status).toBe(400);
  });

  it('the last owner can be neither demoted nor disabled', async () => {
    const org = await createOrg(h.db, 'Solo Org');
    const solo = await consoleSignIn(h, { role: 'owner', orgGuid: org.orgGuid });
    const demote = await solo.request('PATCH', `/users/${solo.user.userId}`, { role: 'manager' });
    expect(demote.status).toBe(409);
    expect(demote.body.error.errorCode).toBe('INVALID_STATE');
    expect((await solo.request('PATCH', `/users/${solo.user.userId}`, { disabled: true })).status).toBe(409);
    expect((await solo.request('GET', '/session')).body.user.role).toBe('owner');
  });

  it("another organisation's users are 404; an e-mail address is unique across organisations", async () => {
    const org = await createOrg(h.db, 'Other Org');
    const stranger = await consoleSignIn(h, { role: 'owner', orgGuid: org.orgGuid });
    expect((await owner.request('PATCH', `/users/${stranger.user.userId}`, { disabled: true })).status).toBe(
      404,
    );
    expect((await owner.request('POST', `/users/${stranger.user.userId}/reset`)).status).toBe(404);
    const listed = (await owner.request('GET', '/users')).body.users.map((u: { email: string }) => u.email);
    expect(listed).toContain(owner.email);
    expect(listed).not.toContain(stranger.email);
    const dup = await owner.request('POST', '/users', {
      email: stranger.email.toUpperCase(),
      role: 'viewer',
    });
    expect(dup.status).toBe(409);
    expect(dup.body.error.errorCode).toBe('EMAIL_TAKEN');
  });

  it("GET /audit: the organisation's entries only (users' and operator's), newest first, with a cursor", async () => {
    const org = await createOrg(h.db, 'Audited Org');
    const own = await consoleSignIn(h, { role: 'owner', orgGuid: org.orgGuid });
    for (let i = 0; i < 3; i++) await own.request('POST', '/users', { email: email('aud'), role: 'viewer' });
    await h.admin('PATCH', `/orgs/${org.orgGuid}/settings`, { il: true });
    await owner.request('POST', '/users', { email: email('elsewhere'), role: 'viewer' });
    const first = await own.request('GET', '/audit?limit=3');
    expect(first.status).toBe(200);
    expect(first.body.entries).toHaveLength(3);
    expect(first.body.entries[0]).toMatchObject({
      method: 'PATCH',
      actor: expect.stringMatching(/^admin token/),
    });
    expect(first.body.entries[1]).toMatchObject({
      method: 'POST',
      route: '/console/api/users',
      actor: `console user ${own.email} (#${own.user.userId})`,
      status: 201,
      outcome: 'ok',
      at: expect.any(String),
    });
    const ids = first.body.entries.map((e: { id: number }) => e.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    const next = await own.request('GET', `/audit?cursor=${first.body.nextCursor}&limit=3`);
    expect(next.body.entries.length).toBeGreaterThanOrEqual(2); // the other invitations and the sign-in
    expect(next.body.entries.every((e: { id: number }) => e.id < ids.at(-1))).toBe(true);
    const everything = [...first.body.entries, ...next.body.entries];
    expect(JSON.stringify(everything)).not.toContain(owner.email);
    expect(JSON.stringify(everything)).not.toContain('elsewhere');
    expect((await own.request('GET', '/audit?cursor=x')).status).toBe(400);
  });

  it('POST /password-reset: always 202; e-mails a reset link when a mailer is configured', async () => {
    const sent: Parameters<LinkMailer>[0][] = [];
    const app = createApp(h.deps, {
      console: { publicUrl: 'https://console.example.org/', mailer: async (m) => void sent.push(m) },
    });
    const ask = (e: string) =>
      app.request('/console/api/password-reset', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: e }),
      });
    const user = await consoleSignIn(h, { role: 'viewer' });
    const known = await ask(user.email);
    const unknown = await ask(`nobody-${kind}@example.org`);
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(await known.text()).toBe(await unknown.text());
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ to: user.email, kind: 'reset', orgName: 'Test Org' });
    expect(sent[0]!.link).toMatch(/^https:\/\/console\.example\.org\/console\/#\/link\/[\w-]{43}$/);
    // Asked again at once: no second e-mail (no flooding).
    await ask(user.email);
    expect(sent).toHaveLength(1);
    // Without a mailer: nothing is sent and nothing changes, still 202.
    expect((await open('POST', '/password-reset', { email: user.email })).status).toBe(202);
    const token = tokenOf(sent[0]!.link);
    const set = await app.request(`/console/api/links/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password: 'reset by e-mail link' }),
    });
    expect(set.status).toBe(200);
    await consoleSignInAs(h, user.email, 'reset by e-mail link');
  });

  it('the data routes run behind the session, CSRF and the audit trail', async () => {
    expect((await open('GET', '/dashboard')).status).toBe(401);
    expect((await open('POST', '/devices', { name: 'Lobby' })).status).toBe(401);
    const manager = await consoleSignIn(h, { role: 'manager' });
    const count = async () => (await h.db.query("SELECT 1 FROM devices WHERE name = 'Behind CSRF'")).length;
    const noToken = await h.request(
      'POST',
      '/console/api/devices',
      { name: 'Behind CSRF' },
      { cookie: manager.cookie },
    );
    expect(noToken.status).toBe(403);
    expect(noToken.body.error.errorCode).toBe('CSRF_REFUSED');
    const crossSite = await manager.request(
      'POST',
      '/devices',
      { name: 'Behind CSRF' },
      { origin: 'https://evil.example' },
    );
    expect(crossSite.status).toBe(403);
    expect(await count()).toBe(0);
    const made = await manager.request('POST', '/devices', { name: 'Behind CSRF' });
    expect(made.status).toBe(201);
    expect(made.headers.get('cache-control')).toBe('no-store');
    expect(await count()).toBe(1);
    const audit = await h.db.query<{
      actor: string;
      route: string;
      org_guid: string;
      status: number;
      outcome: string;
    }>(
      "SELECT actor, route, org_guid, status, outcome FROM admin_audit WHERE path = '/console/api/devices' ORDER BY id",
    );
    // (The request without a session, refused 401, is not written: strangers cannot fill the log.)
    expect(audit.map((a) => [a.actor, a.status, a.outcome])).toEqual([
      [`console user ${manager.email} (#${manager.user.userId})`, 403, 'refused'],
      // Refused as cross-site before its session is checked: named by the session cookie it carried.
      [`console user ${manager.email} (#${manager.user.userId})`, 403, 'refused'],
      [`console user ${manager.email} (#${manager.user.userId})`, 201, 'ok'],
    ]);
    expect(audit.at(-1)).toMatchObject({ route: '/console/api/devices', org_guid: h.org.orgGuid });
  });

  it('the test helper signs in and works against a real server too', async () => {
    const base = await h.listen();
    const s = await consoleSignIn(h, { role: 'manager', baseUrl: base });
    const me = await s.request('GET', '/session');
    expect(me.status).toBe(200);
    expect(me.body.user.email).toBe(s.email);
    expect((await s.request('POST', '/session/sign-out-everywhere')).status).toBe(200);
    expect((await s.request('GET', '/console/api/session')).status).toBe(401);
  });
});
