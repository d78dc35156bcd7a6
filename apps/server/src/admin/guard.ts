/**
 * The admin API's door: the bearer token (compared in constant time), a lockout of addresses that
 * keep sending wrong tokens, and the audit log of every admin action and every refused attempt.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import { ERROR_CODES } from '@kupah/contracts';
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/env.ts';
import { ApiError } from '../http/errors.ts';
import { type AuditOutcome, insertAudit, summarise, tokenActor } from './audit.ts';

export interface AdminGuardOptions {
  token: string;
  /** Wrong tokens from one address within `windowMs` that lock it out (default 10). */
  maxFailures?: number;
  /** Default one minute. */
  windowMs?: number;
  /** How long a locked-out address is refused, whatever it sends (default 15 minutes). */
  lockMs?: number;
  /**
   * The server is behind a reverse proxy that appends the client's address to X-Forwarded-For:
   * the last entry is the client (default false: the socket's peer address).
   */
  trustProxy?: boolean;
}

/** Reads that disclose key material or its state: audited like changes. */
const AUDITED_READS = [/^\/admin\/secrets(\/|$)/, /^\/admin\/envelope-keys(\/|$)/, /^\/admin\/audit(\/|$)/];
/** Most addresses whose failures are remembered at once (a flood of addresses cannot grow memory). */
const MAX_TRACKED = 10_000;

/** SHA-256 both sides so the comparison is constant-time whatever the lengths. */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const given = createHash('sha256').update(m[1]!.trim()).digest();
  const want = createHash('sha256').update(token).digest();
  return timingSafeEqual(given, want);
}

/** The caller's address: the socket's peer, or with `trustProxy` the last X-Forwarded-For entry. */
export function remoteAddress(c: Context, trustProxy: boolean): string | null {
  if (trustProxy) {
    const xff = c.req.header('x-forwarded-for');
    const last = xff?.split(',').pop()?.trim();
    if (last) return last.slice(0, 64);
  }
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null; // app.request() in tests: no socket
  }
}

export function adminGuard(opts: AdminGuardOptions): MiddlewareHandler<AppEnv> {
  const maxFailures = opts.maxFailures ?? 10;
  const windowMs = opts.windowMs ?? 60_000;
  const lockMs = opts.lockMs ?? 15 * 60_000;
  const actor = tokenActor(opts.token);
  const failures = new Map<string, { times: number[]; lockedUntil: number }>();

  return async (c, next) => {
    const { deps } = c.var;
    const now = deps.now().getTime();
    const remote = remoteAddress(c, opts.trustProxy ?? false);
    const key = remote ?? 'unknown';
    const audit = async (who: string, status: number, outcome: AuditOutcome, summary: unknown) => {
      const params = c.req.param() as Record<string, string>;
      const { org, ...target } = params;
      try {
        await insertAudit(deps.db, {
          at: deps.now(),
          actor: who,
          method: c.req.method,
          route: outcome === 'refused' ? c.req.path : c.req.routePath,
          path: c.req.path,
          orgGuid: outcome === 'refused' ? null : (org ?? null),
          target: outcome === 'refused' ? {} : target,
          summary,
          remoteAddr: remote,
          userAgent: c.req.header('user-agent') ?? null,
          status,
          outcome,
        });
      } catch (err) {
        deps.logger.error({ err: String(err), path: c.req.path }, 'admin audit: could not write the entry');
      }
    };

    const state = failures.get(key);
    if (state && state.lockedUntil > now) {
      const retry = Math.ceil((state.lockedUntil - now) / 1000);
      await audit('unauthenticated', 429, 'refused', null);
      throw new ApiError(
        429,
        ERROR_CODES.RATE_LIMITED,
        `Admin API: too many wrong tokens from this address; try again in ${retry} s`,
        undefined,
        { 'Retry-After': String(retry) },
      );
    }

    if (!tokenMatches(c.req.header('authorization'), opts.token)) {
      const s = state ?? { times: [], lockedUntil: 0 };
      s.times = [...s.times.filter((t) => t > now - windowMs), now];
      if (s.times.length >= maxFailures) {
        s.lockedUntil = now + lockMs;
        s.times = [];
        deps.logger.warn(
          { remote: key, failures: maxFailures, lockSeconds: lockMs / 1000 },
          'admin API: address locked out after repeated wrong tokens',
        );
      }
      if (!failures.has(key) && failures.size >= MAX_TRACKED) {
        failures.delete(failures.keys().next().value!);
      }
      failures.set(key, s);
      deps.logger.warn({ remote: key, path: c.req.path }, 'admin API: wrong or missing token');
      await audit('unauthenticated', 401, 'refused', null);
      throw new ApiError(
        401,
        ERROR_CODES.UNAUTHORIZED,
        'Admin API: send Authorization: Bearer <ADMIN_TOKEN>',
      );
    }
    if (state && state.lockedUntil <= now && state.times.every((t) => t <= now - windowMs)) {
      failures.delete(key);
    }

    const audited = c.req.method !== 'GET' || AUDITED_READS.some((r) => r.test(c.req.path));
    let summary: unknown = null;
    if (audited) {
      const query = Object.fromEntries(new URL(c.req.url).searchParams);
      let body: unknown;
      if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
        const text = await c.req.raw
          .clone()
          .text()
          .catch(() => '');
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = '(not JSON)';
        }
      }
      const parts = {
        ...(Object.keys(query).length ? { query } : {}),
        ...(body !== undefined ? { body } : {}),
      };
      summary = Object.keys(parts).length ? summarise(parts) : null;
    }
    await next();
    if (audited) {
      const status = c.res.status;
      await audit(actor, status, status < 400 ? 'ok' : 'failed', summary);
    }
  };
}
