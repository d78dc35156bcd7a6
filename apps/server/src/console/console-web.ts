/**
 * The organisation's web console (apps/console, a Vite build) at /console/: its index.html and
 * hashed assets, under a strict Content-Security-Policy (no inline script, API calls only to this
 * origin, images only from here or data: URLs, never framed). /console/api/* is the console's API
 * and is left to it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import { ERROR_CODES } from '@kupah/contracts';
import { Hono } from 'hono';
import type { AppEnv } from '../http/env.ts';

export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const isApi = (path: string) => path === '/console/api' || path.startsWith('/console/api/');

export function consoleWebRoutes(dir: string) {
  const files = serveStatic({ root: dir, rewriteRequestPath: (p) => p.replace(/^\/console/, '') || '/' });
  return new Hono<AppEnv>()
    .get('/console', (c) => c.redirect('/console/', 301))
    .get('/console/*', async (c, next) => {
      if (isApi(c.req.path)) return next();
      if (!existsSync(join(dir, 'index.html'))) {
        return c.json(
          {
            error: {
              errorCode: ERROR_CODES.NOT_FOUND,
              message: 'The console is not built: run "npm run build -w @kupah/console"',
            },
          },
          404,
        );
      }
      c.header('Content-Security-Policy', CONSOLE_CSP);
      c.header('X-Content-Type-Options', 'nosniff');
      c.header('X-Frame-Options', 'DENY');
      c.header('Referrer-Policy', 'no-referrer');
      // index.html is asked for again on every visit (a new build's asset names); hashed assets never change.
      c.header(
        'Cache-Control',
        c.req.path.startsWith('/console/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
      return files(c, next);
    });
}
