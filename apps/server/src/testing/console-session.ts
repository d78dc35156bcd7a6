/**
 * Tests of the console API: a console user of an organisation with a role, signed in through the
 * real HTTP endpoints (POST /console/api/session), and a `request` that sends the session's cookie
 * and, on changing requests, its X-CSRF-Token. Works with `app.request()` (the default) and with a
 * real server (`baseUrl`, e.g. from `h.listen()`).
 *
 *   const owner = await consoleSignIn(h, { role: 'owner' });
 *   const res = await owner.request('GET', '/dashboard?range=today'); // → /console/api/dashboard…
 */
import { randomBytes } from 'node:crypto';
import type { ConsoleRole } from '../console/env.ts';
import { TEST_SCRYPT_PARAMS, useScryptParamsForTests } from '../console/password.ts';
import { createUser, orgIdOf, type UserView } from '../console/users-service.ts';
import type { Harness, Reply } from './harness.ts';

export interface ConsoleSession {
  /** The `Cookie` header value: `kupah_console=<token>`. */
  cookie: string;
  csrfToken: string;
  user: UserView;
  email: string;
  password: string;
  /**
   * A request with the session: `path` under /console/api (`/payments`) or a full path
   * (`/console/api/payments`); a body is sent as JSON; `headers` are added (and may override).
   */
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
}

export interface ConsoleSignInOptions {
  role: ConsoleRole;
  /** Default: a new random address. */
  email?: string;
  /** Default: a new random password. */
  password?: string;
  name?: string;
  /** The user's organisation (default the harness's `h.org`). */
  orgGuid?: string;
  /** A real server's base URL (`await h.listen()`); default `h.app.request()`. */
  baseUrl?: string;
}

/**
 * A test file that signs console users in hashes with cheap scrypt parameters (N = 2^10: about a
 * millisecond, not 0.1-0.5 s a sign-in). Production's parameters cannot be changed (password.ts
 * refuses outside vitest); password.test.ts checks them. Each test file has its own modules.
 */
useScryptParamsForTests(TEST_SCRYPT_PARAMS);

export const consolePath = (path: string): string =>
  path.startsWith('/console/') ? path : `/console/api${path.startsWith('/') ? '' : '/'}${path}`;

type Send = (path: string, init: RequestInit) => Promise<Response>;

async function toReply(res: Response): Promise<Reply> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {}
  return { status: res.status, body, headers: res.headers };
}

/** A sender for `app.request()` (no `baseUrl`) or a real server. */
export function consoleSender(h: Pick<Harness, 'app'>, baseUrl?: string): Send {
  return baseUrl
    ? (path, init) => fetch(`${baseUrl.replace(/\/+$/, '')}${path}`, init)
    : async (path, init) => h.app.request(path, init);
}

/** Creates the user (with a password) and signs in through POST /console/api/session. */
export async function consoleSignIn(
  h: Pick<Harness, 'app' | 'deps' | 'org'>,
  opts: ConsoleSignInOptions,
): Promise<ConsoleSession> {
  const email = opts.email ?? `${opts.role}-${randomBytes(5).toString('hex')}@example.org`;
  const password = opts.password ?? `pw-${randomBytes(12).toString('base64url')}`;
  const orgId = await orgIdOf(h.deps.db, opts.orgGuid ?? h.org.orgGuid);
  await createUser(
    h.deps,
    orgId,
    { email, role: opts.role, name: opts.name ?? null, password },
    'http://localhost',
  );
  return consoleSignInAs(h, email, password, opts.baseUrl);
}

/** Signs in an existing user through POST /console/api/session (throws unless it succeeds). */
export async function consoleSignInAs(
  h: Pick<Harness, 'app'>,
  email: string,
  password: string,
  baseUrl?: string,
): Promise<ConsoleSession> {
  const send = consoleSender(h, baseUrl);
  const res = await send('/console/api/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const reply = await toReply(res);
  if (reply.status !== 200) {
    throw new Error(`console sign-in as ${email} failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  }
  const token = /(?:^|,\s*)kupah_console=([^;]*)/.exec(res.headers.get('set-cookie') ?? '')?.[1];
  if (!token) throw new Error('console sign-in: no kupah_console cookie in the answer');
  const cookie = `kupah_console=${token}`;
  const csrfToken = reply.body.csrfToken as string;
  return {
    cookie,
    csrfToken,
    user: reply.body.user as UserView,
    email,
    password,
    async request(method, path, body, headers = {}) {
      const upper = method.toUpperCase();
      const h: Record<string, string> = { cookie };
      if (upper !== 'GET' && upper !== 'HEAD') h['x-csrf-token'] = csrfToken;
      if (body !== undefined) h['content-type'] = 'application/json';
      return toReply(
        await send(consolePath(path), {
          method: upper,
          headers: { ...h, ...headers },
          ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
        }),
      );
    },
  };
}
