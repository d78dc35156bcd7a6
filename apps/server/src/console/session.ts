/**
 * The console's session: cookie `kupah_console` (HttpOnly; SameSite=Strict; Path=/console; Secure
 * when the browser reaches the server over HTTPS: `secureCookieFor`) holding a random 32-byte token whose SHA-256 is the session's id.
 * `consoleSession` lets a request through only with a live session of an enabled user, sets
 * `consoleUser`, and refuses a changing request without the session's `X-CSRF-Token`.
 */
import { ERROR_CODES } from '@kupah/contracts';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { ApiError } from '../http/errors.ts';
import { CSRF_HEADER, csrfRefused, csrfTokenMatches, isSafeMethod } from './csrf.ts';
import type { ConsoleEnv } from './env.ts';
import { resumeSession, SESSION_LIMITS } from './users-service.ts';

export const SESSION_COOKIE = 'kupah_console';
const COOKIE_PATH = '/console';

/** The console API's environment inside this module's routes: the session's CSRF token, what to audit. */
export interface SessionEnv {
  Variables: ConsoleEnv['Variables'] & {
    consoleCsrf: string;
    /** Set by a route that knows who acted before a session exists (sign-in, links). */
    consoleAudit?: { actor: string; orgGuid: string | null };
  };
}

function cookie(value: string, maxAgeSeconds: number, secure: boolean): string {
  return [
    `${SESSION_COOKIE}=${value}`,
    `Path=${COOKIE_PATH}`,
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
    ...(secure ? ['Secure'] : []),
  ].join('; ');
}

/** The Set-Cookie of a new session (lives as long as the session's absolute limit). */
export const sessionCookie = (token: string, secure: boolean): string =>
  cookie(token, Math.floor(SESSION_LIMITS.absoluteMs / 1000), secure);

/** The Set-Cookie that removes the session cookie. */
export const clearedSessionCookie = (secure: boolean): string => cookie('', 0, secure);

export const sessionToken = (c: Context): string | undefined => getCookie(c, SESSION_COOKIE);

/**
 * Whether the session cookie is `Secure`: the server holds the TLS certificate, or PUBLIC_URL is
 * https:, or (behind a trusted proxy, TRUST_PROXY=1) the proxy says the browser came over HTTPS
 * (`X-Forwarded-Proto: https`, its last entry).
 */
export function secureCookieFor(opts: {
  tls: boolean;
  publicUrl?: string | undefined;
  trustProxy: boolean;
}): (c: Context) => boolean {
  const always = opts.tls || (opts.publicUrl !== undefined && new URL(opts.publicUrl).protocol === 'https:');
  return (c) => {
    if (always) return true;
    if (!opts.trustProxy) return false;
    const proto = c.req.header('x-forwarded-proto')?.split(',').at(-1)?.trim().toLowerCase();
    return proto === 'https';
  };
}

/**
 * 401 without a live session (the cookie removed), 403 CSRF_REFUSED for a changing request
 * without the session's X-CSRF-Token; otherwise sets `consoleUser` (and `consoleCsrf`).
 */
export function consoleSession(opts: {
  secureCookie: (c: Context) => boolean;
}): MiddlewareHandler<SessionEnv> {
  return async (c, next) => {
    const token = sessionToken(c);
    const session = await resumeSession(c.var.deps, token);
    if (!session) {
      throw new ApiError(
        401,
        ERROR_CODES.UNAUTHORIZED,
        'Sign in to the console',
        undefined,
        token !== undefined ? { 'Set-Cookie': clearedSessionCookie(opts.secureCookie(c)) } : undefined,
      );
    }
    c.set('consoleUser', session.user);
    c.set('consoleCsrf', session.csrfToken);
    if (!isSafeMethod(c.req.method) && !csrfTokenMatches(c.req.header(CSRF_HEADER), session.csrfToken)) {
      throw csrfRefused(`Refused: send the session's ${CSRF_HEADER} header`);
    }
    await next();
  };
}
