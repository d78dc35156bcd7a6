/**
 * The console API (`/console/api`), as one Hono sub-app: answers never cached; changing requests
 * from another site refused; every changing request audited; sign-in and one-time links open;
 * everything else behind the session (with its CSRF token): the sign-in and people routes, then
 * the console's data routes.
 */
import { Hono } from 'hono';
import { consoleAuditTrail } from './audit-trail.ts';
import { authRoutes, type ConsoleAuthOptions, publicAuthRoutes } from './auth-routes.ts';
import { crossSiteGuard } from './csrf.ts';
import { consoleDataRoutes } from './data-routes.ts';
import { dummyHash } from './password.ts';
import { consoleSession, type SessionEnv, secureCookieFor } from './session.ts';

export interface ConsoleApiOptions {
  /**
   * Served over TLS (AppOptions.hsts): the session cookie is `Secure` (it is also when `publicUrl`
   * is https:, or behind a trusted proxy that says X-Forwarded-Proto: https).
   */
  secure?: boolean | undefined;
  /** Behind a reverse proxy (TRUST_PROXY): the client's address is the last X-Forwarded-For entry. */
  trustProxy?: boolean | undefined;
  /**
   * The server's public base URL (PUBLIC_URL): one-time links are e-mailed only when it is set
   * (made on it); links shown in the console fall back to the request's origin.
   */
  publicUrl?: string | undefined;
  /** E-mails invitation and reset links (SMTP configured; used only with `publicUrl`). */
  mailer?: ConsoleAuthOptions['mailer'];
  /** WEBHOOK_ALLOW_PRIVATE=1: webhook URLs set in the console may be http:// or private, as in the admin API. */
  allowInsecureWebhooks?: boolean | undefined;
}

export function consoleApi(opts: ConsoleApiOptions = {}) {
  const publicUrl = opts.publicUrl?.replace(/\/+$/, '');
  const trustProxy = opts.trustProxy ?? false;
  const auth: ConsoleAuthOptions = {
    secureCookie: secureCookieFor({ tls: opts.secure ?? false, publicUrl, trustProxy }),
    trustProxy,
    publicUrl,
    mailer: opts.mailer,
  };
  // The dummy hash an unknown e-mail is verified against: made now, not in the first sign-in's time.
  void dummyHash();
  const publicOrigin = opts.publicUrl ? [new URL(opts.publicUrl).origin] : [];
  const api = new Hono<SessionEnv>();
  api.use(async (c, next) => {
    await next();
    c.res.headers.set('Cache-Control', 'no-store');
  });
  api.use(consoleAuditTrail({ trustProxy: auth.trustProxy }));
  api.use(crossSiteGuard(() => publicOrigin));
  api.route('/', publicAuthRoutes(auth));
  // Everything below needs a session (and, to change anything, its X-CSRF-Token).
  api.use(consoleSession({ secureCookie: auth.secureCookie }));
  api.route('/', authRoutes(auth));
  // The console's data routes (console/data-routes.ts).
  api.route(
    '/',
    consoleDataRoutes({ publicUrl: auth.publicUrl, allowInsecureWebhooks: opts.allowInsecureWebhooks }),
  );
  return api;
}
