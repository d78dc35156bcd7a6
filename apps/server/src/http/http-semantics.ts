/**
 * What strict HTTP stacks expect of the API's paths, beyond the routes themselves:
 * - a known path asked with another method answers 405 with `Allow` (not 404);
 * - a POST or PUT body that is not `application/json` answers 415 (not 400);
 * - a JSON object with a key given twice answers 400 naming it (`JSON.parse` would keep the last);
 * - a trailing slash on an API path is tolerated (`/v1/External/Charge/`);
 * - every 401 carries `WWW-Authenticate` (some HTTP clients, e.g. Android's HttpURLConnection,
 *   throw on a 401 without it).
 */
import { ERROR_CODES } from '@kupah/contracts';
import type { MiddlewareHandler } from 'hono';
import { findDuplicateKey } from './duplicate-keys.ts';
import { ApiError, validationError } from './errors.ts';

/** API paths: the External API and device sync (`v1` or `V1`). */
export const isApiPath = (path: string): boolean => /^\/[vV]1\//.test(path);

/** An API path without its trailing slashes (other paths unchanged: `/terminal/` is a directory). */
export function withoutTrailingSlash(path: string): string {
  return isApiPath(path) && path.length > 1 && path.endsWith('/') ? path.replace(/\/+$/, '') : path;
}

interface RouteEntry {
  method: string;
  path: string;
}

/** A Hono route path (`/v1/External/Schedules/:scheduleNum/Cancel`) as an anchored regex. */
function routeRegex(path: string): RegExp {
  let out = '';
  for (const part of path.split('/').slice(1)) {
    out += '/';
    if (part === '*') out += '.*';
    else if (part.startsWith(':')) {
      const custom = /^:[^{]+\{(.+)\}$/.exec(part);
      out += custom ? `(?:${custom[1]})` : '[^/]+';
    } else out += part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out || '/'}$`);
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** `application/json`, with or without parameters (`; charset=utf-8`), or a `+json` type. */
export function isJsonMediaType(contentType: string | undefined): boolean {
  const media = contentType?.split(';')[0]?.trim().toLowerCase();
  return (
    media === 'application/json' || (media?.startsWith('application/') === true && media.endsWith('+json'))
  );
}

/**
 * 405 and 415 for API paths. `routes` is read on the first request (all routes are registered by
 * then); `pathOf` is the path as the router sees it (canonical `v1`, no trailing slash).
 */
export function methodAndMediaType(
  routes: () => readonly RouteEntry[],
  pathOf: (request: Request) => string,
): MiddlewareHandler {
  let table: { regex: RegExp; method: string }[] | null = null;
  const allowedFor = (path: string): string[] => {
    table ??= routes()
      .filter((r) => r.method !== 'ALL' && isApiPath(r.path))
      .map((r) => ({ regex: routeRegex(r.path), method: r.method.toUpperCase() }));
    const methods = new Set(table.filter((r) => r.regex.test(path)).map((r) => r.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
  return async (c, next) => {
    const path = pathOf(c.req.raw);
    if (!isApiPath(path)) return next();
    const allowed = allowedFor(path);
    if (allowed.length === 0) return next(); // not a known path: 404
    const method = c.req.method.toUpperCase();
    if (!allowed.includes(method)) {
      if (method === 'OPTIONS') return c.body(null, 204, { Allow: [...allowed, 'OPTIONS'].join(', ') });
      throw new ApiError(
        405,
        ERROR_CODES.METHOD_NOT_ALLOWED,
        `${path} does not answer ${method}; it answers ${allowed.join(', ')}`,
        undefined,
        { Allow: allowed.join(', ') },
      );
    }
    if (!BODY_METHODS.has(method)) return next();
    const sent = c.req.header('content-type');
    if (!isJsonMediaType(sent)) {
      throw new ApiError(
        415,
        ERROR_CODES.UNSUPPORTED_MEDIA_TYPE,
        sent
          ? `The body must be application/json, not ${sent.slice(0, 100)}`
          : 'The body must be application/json: send Content-Type: application/json',
        undefined,
        { Accept: 'application/json' },
      );
    }
    // Read once here (Hono keeps it for the route's own parsing).
    const duplicate = findDuplicateKey(await c.req.text());
    if (duplicate !== null) {
      throw validationError([{ field: duplicate, message: 'is given more than once in one JSON object' }]);
    }
    return next();
  };
}

/** The `WWW-Authenticate` challenge of a 401 on `path`. */
export function challengeFor(path: string): string {
  if (/^\/admin(\/|$)/.test(path)) return 'Bearer realm="kupah-admin"';
  // The console signs in with a form and a cookie: a scheme browsers do not prompt for.
  if (/^\/console(\/|$)/.test(path)) return 'Session realm="kupah-console"';
  if (/^\/[vV]1\/Device\//.test(path)) return 'Bearer realm="kupah-device"';
  return 'APIKey realm="kupah", Bearer realm="kupah"';
}

/** Adds `WWW-Authenticate` to any 401 answer that has none. */
export const authenticateChallenge: MiddlewareHandler = async (c, next) => {
  await next();
  if (c.res.status === 401 && !c.res.headers.has('WWW-Authenticate')) {
    c.res.headers.set('WWW-Authenticate', challengeFor(c.req.path));
  }
};
