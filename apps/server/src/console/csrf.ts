/**
 * Cross-site request forgery defences of the console API, in layers:
 * 1. a request that says it comes from another site (`Sec-Fetch-Site: cross-site|same-site`, or an
 *    `Origin` other than the server's own) and would change something is refused, signed in or not
 *    (this also stops sign-in CSRF);
 * 2. a changing request's body must be `application/json`, whatever its method, and a body without a
 *    Content-Type is refused (a cross-site form cannot send JSON without a CORS preflight, which
 *    this API never grants);
 * 3. a signed-in changing request must carry `X-CSRF-Token` equal to its session's token
 *    (console/session.ts), compared in constant time;
 * and the cookie itself is SameSite=Strict.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ERROR_CODES } from '@kupah/contracts';
import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../http/errors.ts';
import { isJsonMediaType } from '../http/http-semantics.ts';

export const CSRF_HEADER = 'X-CSRF-Token';

/** GET and HEAD change nothing (and OPTIONS is never granted anything): everything else is checked. */
export const isSafeMethod = (method: string): boolean => method === 'GET' || method === 'HEAD';

export const csrfRefused = (why: string) => new ApiError(403, ERROR_CODES.CSRF_REFUSED, why);

/** SHA-256 both sides: constant-time whatever the lengths. */
export function csrfTokenMatches(sent: string | undefined, expected: string): boolean {
  if (!sent) return false;
  const a = createHash('sha256').update(sent).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/**
 * Refuses a changing request sent from another site. `allowedOrigins`: the server's public origin
 * (PUBLIC_URL), if any; an Origin on the request's own host is always allowed.
 */
export function crossSiteGuard(allowedOrigins: () => string[] = () => []): MiddlewareHandler {
  return async (c, next) => {
    if (isSafeMethod(c.req.method)) return next();
    const site = c.req.header('sec-fetch-site')?.toLowerCase();
    if (site !== undefined && site !== 'same-origin' && site !== 'none') {
      throw csrfRefused(`Refused: a ${site} request (the console accepts changes from its own pages only)`);
    }
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      // The request's own host (behind a TLS-terminating proxy the scheme seen here may differ).
      let host: string | null = null;
      try {
        host = new URL(origin).host;
      } catch {}
      const own = c.req.header('host') ?? new URL(c.req.url).host;
      const ok = host === own || allowedOrigins().includes(origin);
      if (!ok) throw csrfRefused('Refused: the request comes from another origin');
    }
    // Any body must say it is JSON (one without a Content-Type is refused too). Over HTTP/1.1 a
    // body comes with Content-Length or Transfer-Encoding.
    const length = c.req.header('content-length');
    const hasBody =
      c.req.header('transfer-encoding') !== undefined || (length !== undefined && length !== '0');
    const type = c.req.header('content-type');
    if (length !== '0' && (type !== undefined ? !isJsonMediaType(type) : hasBody)) {
      throw csrfRefused('Refused: a console request body must be application/json');
    }
    await next();
  };
}
