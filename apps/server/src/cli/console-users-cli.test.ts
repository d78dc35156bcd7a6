/**
 * `npm run admin -- user create|list|disable` against a real admin listener, and what the console
 * makes of the result (sign-in, the set-up link, a disabled user's sessions).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSignInAs } from '../testing/console-session.ts';
import { ADMIN_TOKEN, createHarness, type Harness } from '../testing/harness.ts';
import { run } from './admin-cli.ts';

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  // biome-ignore lint/suspicious/noExplicitAny: CLI answers are read field by field.
  json: any;
}

async function cli(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
    env,
  });
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {}
  return { code, stdout, stderr, json };
}

describe('admin CLI: console users', () => {
  let h: Harness;
  let url: string;
  const admin = (...argv: string[]) => cli([...argv, '--server', url, '--json'], { ADMIN_TOKEN });

  beforeAll(async () => {
    h = await createHarness('pglite');
    url = await h.listenAdmin();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('user create --password: a user who signs in to the console with it; the password is never audited', async () => {
    const o = await admin(
      'user',
      'create',
      '--org',
      h.org.orgGuid,
      '--email',
      'Owner@Example.org',
      '--role',
      'owner',
      '--name',
      'Dina Owner',
      '--password',
      'cli chosen password',
    );
    expect(o.code, o.stderr).toBe(0);
    expect(o.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(o.json.user).toMatchObject({
      // Stored normalised (lower case), as sign-in looks it up.
      email: 'owner@example.org',
      role: 'owner',
      name: 'Dina Owner',
      orgGuid: h.org.orgGuid,
      invited: false,
      disabled: false,
    });
    expect(o.json.link).toBeUndefined();
    const s = await consoleSignInAs(h, 'owner@example.org', 'cli chosen password');
    expect(s.user.role).toBe('owner');
    const audit = await h.db.query<{ summary: unknown; org_guid: string; route: string }>(
      "SELECT summary, org_guid, route FROM admin_audit WHERE route = '/admin/orgs/:org/users' AND method = 'POST'",
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]!.org_guid).toBe(h.org.orgGuid);
    expect(JSON.stringify(audit[0]!.summary)).toContain('[redacted]');
    expect(JSON.stringify(await h.db.query('SELECT * FROM admin_audit'))).not.toContain(
      'cli chosen password',
    );
  });

  it('user create without --password prints a one-time set-up link that sets the password once', async () => {
    const o = await admin(
      'user',
      'create',
      '--org',
      h.org.orgGuid,
      '--email',
      'viewer@example.org',
      '--role',
      'VIEWER',
    );
    expect(o.code, o.stderr).toBe(0);
    expect(o.json.user).toMatchObject({ email: 'viewer@example.org', role: 'viewer', invited: true });
    expect(o.json.link).toMatch(/^http:\/\/localhost\/console\/#\/link\/[\w-]{43}$/);
    const token = o.json.link.split('/').at(-1);
    const info = await h.request('GET', `/console/api/links/${token}`);
    expect(info.body).toEqual({ kind: 'invitation', email: 'viewer@example.org', orgName: 'Test Org' });
    expect(
      (await h.request('POST', `/console/api/links/${token}`, { password: 'set through the link' })).status,
    ).toBe(200);
    expect(
      (await h.request('POST', `/console/api/links/${token}`, { password: 'set through the link' })).status,
    ).toBe(404);
    await consoleSignInAs(h, 'viewer@example.org', 'set through the link');
  });

  it('user list shows the users of the organisation', async () => {
    const o = await admin('user', 'list', '--org', h.org.orgGuid);
    expect(o.code).toBe(0);
    expect(o.json.users.map((u: { email: string; role: string }) => [u.email, u.role])).toEqual([
      ['owner@example.org', 'owner'],
      ['viewer@example.org', 'viewer'],
    ]);
    const pretty = await cli(['user', 'list', '--org', h.org.orgGuid, '--server', url], { ADMIN_TOKEN });
    expect(pretty.code).toBe(0);
    expect(pretty.stdout).toContain('\n  "users": [');
  });

  it('user disable ends the user’s sessions and refuses their sign-in', async () => {
    const s = await consoleSignInAs(h, 'viewer@example.org', 'set through the link');
    const o = await admin('user', 'disable', '--org', h.org.orgGuid, '--email', 'VIEWER@example.org');
    expect(o.code, o.stderr).toBe(0);
    expect(o.json).toMatchObject({ email: 'viewer@example.org', disabled: true });
    expect((await s.request('GET', '/session')).status).toBe(401);
    const again = await h.request('POST', '/console/api/session', {
      email: 'viewer@example.org',
      password: 'set through the link',
    });
    expect(again.status).toBe(401);
    // The last owner cannot be disabled.
    const last = await admin('user', 'disable', '--org', h.org.orgGuid, '--email', 'owner@example.org');
    expect(last.code).toBe(1);
    expect(last.json.error.errorCode).toBe('INVALID_STATE');
  });

  it('refuses bad invocations (exit 2), a taken e-mail and an unknown user (exit 1), never repeating a password', async () => {
    const bad = await admin(
      'user',
      'create',
      '--org',
      h.org.orgGuid,
      '--email',
      'x@example.org',
      '--role',
      'admin',
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--role must be viewer, manager, owner/);
    const mail = await admin(
      'user',
      'create',
      '--org',
      h.org.orgGuid,
      '--email',
      'not-an-address',
      '--role',
      'owner',
    );
    expect(mail.code).toBe(2);
    expect(mail.stderr).toContain('--email must be an e-mail address');
    const weak = await admin(
      'user',
      'create',
      '--org',
      h.org.orgGuid,
      '--email',
      'weak@example.org',
      '--role',
      'viewer',
      '--password',
      'short1',
    );
    expect(weak.code).toBe(1);
    expect(weak.json.error.errorCode).toBe('VALIDATION_FAILED');
    expect(weak.stderr + weak.stdout).not.toContain('short1');
    const taken = await admin(
      'user',
      'create',
      '--org',
      h.org.orgGuid,
      '--email',
      'OWNER@example.org',
      '--role',
      'viewer',
    );
    expect(taken.code).toBe(1);
    expect(taken.json.error.errorCode).toBe('EMAIL_TAKEN');
    const nobody = await admin('user', 'disable', '--org', h.org.orgGuid, '--email', 'nobody@example.org');
    expect(nobody.code).toBe(1);
    expect(nobody.json.error.errorCode).toBe('NOT_FOUND');
    const noOrg = await admin('user', 'list', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b');
    expect(noOrg.code).toBe(1);
    expect(noOrg.json.error.errorCode).toBe('NOT_FOUND');
  });

  it('user --help lists its commands and flags', async () => {
    const o = await cli(['user', '--help']);
    expect(o.code).toBe(0);
    for (const s of [
      'user create',
      'user list',
      'user disable',
      '--email ',
      '--role ',
      '--password ',
      '--name ',
    ])
      expect(o.stdout).toContain(s);
  });
});
