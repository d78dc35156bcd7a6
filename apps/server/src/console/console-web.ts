/**
 * The organisation's web console (apps/console, a Vite build) at /console/: its index.html and
 * hashed assets, under a strict Content-Security-Policy (no inline script, API calls only to this
 * origin, images only from here or data: URLs, never framed). /console/api/* is the console's API
 * and is left to it.
 */
import { builtAppRoutes } from '../http/built-app.ts';

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

export const consoleWebRoutes = (dir: string) =>
  builtAppRoutes({
    prefix: '/console',
    dir,
    csp: CONSOLE_CSP,
    notBuilt: 'The console is not built: run "npm run build -w @kupah/console"',
    skip: isApi,
  });
