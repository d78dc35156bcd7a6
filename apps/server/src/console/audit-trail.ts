/**
 * The console's audit trail: every request to the console API other than GET/HEAD (sign-in
 * attempts included, successes and failures, and refused ones) is written to `admin_audit`, the
 * one audit log per organisation that holds the operator's actions too: who (`console user
 * <email> (#<id>)`), the organisation's GUID, method, route, path (one-time tokens removed), the
 * arguments summarised with every secret field replaced (admin/audit.ts `summarise`: passwords
 * never), when, status and outcome.
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

/** Path segments after these are one-time tokens: never written. */
const TOKEN_PATH = /(\/links\/)[^/]+/;

async function bodySummary(request: Request): Promise<unknown> {
  const text = await request
    .clone()
    .text()
    .catch(() => '');
  if (!text) return null;
  try {
    return summarise({ body: JSON.parse(text) });
  } catch {
    return { body: '(not JSON)' };
  }
}

export function consoleAuditTrail(opts: { trustProxy: boolean }): MiddlewareHandler<SessionEnv> {
  return async (c, next) => {
    if (isSafeMethod(c.req.method)) return next();
    const { deps } = c.var;
    const summary = await bodySummary(c.req.raw);
    await next();
    const named = c.get('consoleAudit');
    const status = c.res.status;
    // Refused before its session was looked at (cross-site): named by the cookie it carried.
    const cookie = getCookie(c, SESSION_COOKIE);
    const user =
      c.get('consoleUser') ??
      (!named && cookie !== undefined ? await sessionOwner(deps.db, cookie).catch(() => null) : null);
    const params = { ...(c.req.param() as Record<string, string>) };
    delete params.token;
    try {
      await insertAudit(deps.db, {
        at: deps.now(),
        actor: user ? userActor(user) : (named?.actor ?? 'unauthenticated'),
        method: c.req.method,
        route: c.req.routePath,
        path: c.req.path.replace(TOKEN_PATH, '$1[token]'),
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
      deps.logger.error({ err: String(err), path: c.req.path }, 'console audit: could not write the entry');
    }
  };
}
