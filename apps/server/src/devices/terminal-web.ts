/**
 * The terminal's web build at /terminal/: the same renderer the Electron app loads, so an
 * organisation can run a kiosk in any browser (and the end-to-end tests drive it in Chromium).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import { ERROR_CODES } from '@kupah/contracts';
import { Hono } from 'hono';
import type { AppEnv } from '../http/env.ts';

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self' http: https:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function terminalRoutes(dir: string) {
  const files = serveStatic({ root: dir, rewriteRequestPath: (p) => p.replace(/^\/terminal/, '') || '/' });
  return new Hono<AppEnv>()
    .get('/terminal', (c) => c.redirect('/terminal/', 301))
    .get('/terminal/*', async (c, next) => {
      if (!existsSync(join(dir, 'index.html'))) {
        return c.json(
          {
            error: {
              errorCode: ERROR_CODES.NOT_FOUND,
              message: 'The terminal is not built: run "npm run build -w @kupah/terminal"',
            },
          },
          404,
        );
      }
      c.header('Content-Security-Policy', CSP);
      c.header('X-Content-Type-Options', 'nosniff');
      c.header('Referrer-Policy', 'no-referrer');
      // index.html is looked for on every start (new builds); hashed assets may be cached for good.
      c.header(
        'Cache-Control',
        c.req.path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      );
      return files(c, next);
    });
}
