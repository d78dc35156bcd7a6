/**
 * The terminal's web build at /terminal/: the same renderer the Electron app loads, so an
 * organisation can run a kiosk in any browser (and the end-to-end tests drive it in Chromium).
 */
import { builtAppRoutes } from '../http/built-app.ts';

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

export const terminalRoutes = (dir: string) =>
  builtAppRoutes({
    prefix: '/terminal',
    dir,
    csp: CSP,
    notBuilt: 'The terminal is not built: run "npm run build -w @kupah/terminal"',
  });
