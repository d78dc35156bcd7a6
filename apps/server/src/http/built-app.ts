/**
 * A Vite build served under a path prefix (the terminal's web build at /terminal/, the console at
 * /console/): its index.html and hashed assets, with the app's Content-Security-Policy, never
 * framed or sniffed, no referrer; index.html asked for again on every visit (a new build's asset
 * names), hashed assets cached for good. A missing build answers 404 saying how to build it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import { ERROR_CODES } from '@kupah/contracts';
import { Hono } from 'hono';
import type { AppEnv } from './env.ts';

export interface BuiltApp {
  /** `/terminal`, `/console`: served at `<prefix>/`, `<prefix>` redirects there. */
  prefix: string;
  /** The build's folder (index.html, assets/). */
  dir: string;
  csp: string;
  /** Said when the build is missing, e.g. "The console is not built: run …". */
  notBuilt: string;
  /** Paths under the prefix that are not the app's (the console's API): left to later routes. */
  skip?: (path: string) => boolean;
}

export function builtAppRoutes(app: BuiltApp) {
  const { prefix, dir } = app;
  const files = serveStatic({
    root: dir,
    rewriteRequestPath: (p) => p.slice(prefix.length) || '/',
  });
  return new Hono<AppEnv>()
    .get(prefix, (c) => c.redirect(`${prefix}/`, 301))
    .get(`${prefix}/*`, async (c, next) => {
      if (app.skip?.(c.req.path)) return next();
      if (!existsSync(join(dir, 'index.html'))) {
        return c.json({ error: { errorCode: ERROR_CODES.NOT_FOUND, message: app.notBuilt } }, 404);
      }
      c.header('Content-Security-Policy', app.csp);
      c.header('X-Content-Type-Options', 'nosniff');
      c.header('X-Frame-Options', 'DENY');
      c.header('Referrer-Policy', 'no-referrer');
      c.header(
        'Cache-Control',
        c.req.path.startsWith(`${prefix}/assets/`) ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
      return files(c, next);
    });
}
