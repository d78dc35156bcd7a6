/**
 * The console's audit trail: every request to the console API other than GET/HEAD (sign-in
 * attempts included, successes and failures, and refused ones), and every CSV export of payments
 * (GET /payments.csv, with its filters), is written to `admin_audit`, the
 * one audit log per organisation that holds the operator's actions too: who (`console user
 * <email> (#<id>)`), the organisation's GUID, method, route, path (one-time tokens removed), the
 * arguments summarised with every secret field replaced (admin/audit.ts `summarise`: passwords
 * never; URLs without user-info or query; at most 8 KiB), when, status and outcome. A request
 * nobody can be named for (no session, no session cookie) is written only on the sign-in, link
 * and password-reset routes: elsewhere it is refused (401) and would only fill the log.
 */
import type { MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { insertAudit, summarise } from '../admin/audit.ts';
import { remoteAddress } from '../admin/guard.ts';
import { isSafeMethod } from './csrf.ts';
import type { ConsoleUser } from './env.ts';
import { SESSION_COOKIE, type SessionEnv } from './session.ts';
import { sessionOwner } from './users-service.ts';

export const userActor = (u: Pick<ConsoleUser, 'email' | 'userId'>): string =>
  `console user ${u.email} (#${u.userId})`;

/** Path segments after these are one-time tokens: never written (audit log, request log). */
const TOKEN_PATH = /(\/links\/)[^/?#]+/;

/** A path with a one-time link's token replaced by `[token]` (for the audit log and the request log). */
export const redactTokenPath = (path: string): string => path.replace(TOKEN_PATH, '$1[token]');

/** The largest summary written (as JSON); a larger one is replaced by its size. */
export const MAX_SUMMARY_CHARS = 8 * 1024;

/** A URL with its user-info, query and fragment removed (they may hold credentials or tokens). */
function bareUrl(s: string): string {
  if (!/^[a-z][a-z\d+.-]*:\/\//i.test(s)) return s;
  try {
    const u = new URL(s);
    if (!u.username && !u.password && !u.search && !u.hash) return s;
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.toString();
  } catch {
    // Not parsable: cut at the first '?' or '#', and anything up to an '@' in the authority.
    return s.replace(/[?#].*$/s, '').replace(/^([a-z][a-z\d+.-]*:\/\/)[^/]*@/i, '$1');
  }
}

/** Every URL-looking string of a summary made bare (webhook URLs with tokens or passwords in them). */
export function withoutUrlSecrets(value: unknown): unknown {
  if (typeof value === 'string') return bareUrl(value);
  if (Array.isArray(value)) return value.map(withoutUrlSecrets);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutUrlSecrets(v)]));
  }
  return value;
}

function capped(summary: unknown): unknown {
  if (summary === null) return null;
  const size = JSON.stringify(summary).length;
  return size > MAX_SUMMARY_CHARS ? { truncated: `(${size} characters of arguments not written)` } : summary;
}

async function bodySummary(request: Request): Promise<unknown> {
  const text = await request
    .clone()
    .text()
    .catch(() => '');
  if (!text) return null;
  try {
    return capped(withoutUrlSecrets(summarise({ body: JSON.parse(text) })));
  } catch {
    return { body: '(not JSON)' };
  }
}

/** The routes audited without a session (whoever is named by them): sign-in, one-time links, reset. */
const OPEN_ROUTE = /\/console\/api\/(?:session|password-reset|links\/[^/]+)\/?$/;

/** A GET that is audited all the same: the CSV export (who exported which payments). */
const AUDITED_GET = /\/console\/api\/payments\.csv\/?$/;

const querySummary = (url: string): unknown => {
  const q = Object.fromEntries(new URL(url).searchParams);
  return Object.keys(q).length > 0 ? capped(withoutUrlSecrets(summarise({ query: q }))) : null;
};

export function consoleAuditTrail(opts: { trustProxy: boolean }): MiddlewareHandler<SessionEnv> {
  return async (c, next) => {
    const exported = c.req.method === 'GET' && AUDITED_GET.test(c.req.path);
    if (isSafeMethod(c.req.method) && !exported) return next();
    const { deps } = c.var;
    const summary = exported ? querySummary(c.req.url) : await bodySummary(c.req.raw);
    await next();
    const named = c.get('consoleAudit');
    const status = c.res.status;
    // Refused before its session was looked at (cross-site): named by the cookie it carried.
    const cookie = getCookie(c, SESSION_COOKIE);
    const user =
      c.get('consoleUser') ??
      (!named && cookie !== undefined ? await sessionOwner(deps.db, cookie).catch(() => null) : null);
    // Without a session, only the sign-in, link and reset routes are written: any other changing
    // request was refused (401) and would only fill the log.
    if (!user && !named && !(c.req.method === 'POST' && OPEN_ROUTE.test(c.req.path))) return;
    const params = { ...(c.req.param() as Record<string, string>) };
    delete params.token;
    try {
      await insertAudit(deps.db, {
        at: deps.now(),
        actor: user ? userActor(user) : (named?.actor ?? 'unauthenticated'),
        method: c.req.method,
        route: c.req.routePath,
        path: redactTokenPath(c.req.path),
        orgGuid: user?.orgGuid ?? named?.orgGuid ?? null,
        target: params,
        summary,
        remoteAddr: remoteAddress(c, opts.trustProxy),
        userAgent: c.req.header('user-agent') ?? null,
        status,
        outcome:
          status < 400 ? 'ok' : status === 401 || status === 403 || status === 429 ? 'refused' : 'failed',
      });
    } catch (err) {
      deps.logger.error(
        { err: String(err), path: redactTokenPath(c.req.path) },
        'console audit: could not write the entry',
      );
    }
  };
}
