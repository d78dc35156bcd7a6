/**
 * Builds the Hono app (no listen): tests call `app.request()`, `main.ts` serves it.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { ERROR_CODES } from '@kupah/contracts';
import { type ErrorHandler, Hono, type MiddlewareHandler, type NotFoundHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import { getPath } from 'hono/utils/url';
import { adminRoutes } from './admin/routes.ts';
import { catalogRoutes } from './catalog/routes.ts';
import type { ConsoleLinkOptions } from './console/admin-user-routes.ts';
import { redactTokenPath } from './console/audit-trail.ts';
import { type ConsoleApiOptions, consoleApi } from './console/console-app.ts';
import { consoleWebRoutes } from './console/console-web.ts';
import type { Deps } from './deps.ts';
import { deviceRoutes } from './devices/routes.ts';
import { terminalRoutes } from './devices/terminal-web.ts';
import type { AppEnv } from './http/env.ts';
import { ApiError, fromZod } from './http/errors.ts';
import { authenticateChallenge, methodAndMediaType, withoutTrailingSlash } from './http/http-semantics.ts';
import { docsRoutes } from './http/openapi.ts';
import { finishDocument } from './http/openapi-document.ts';
import { tokenBuckets } from './http/rate-limit.ts';
import { paymentRoutes } from './payments/routes.ts';
import { peopleRoutes } from './people/routes.ts';
import { receiptRoutes } from './receipts/routes.ts';
import { reportRoutes } from './reports/routes.ts';
import { scheduleRoutes } from './schedules/routes.ts';
import { bindKeyEncryption } from './secrets/server-kek.ts';

export const BODY_LIMIT = 64 * 1024;
/** A device push carries up to 100 operations with their sealed card data. */
export const PUSH_BODY_LIMIT = 1024 * 1024;
const PUSH_PATH = '/v1/Device/Sync/Push';

/**
 * `v1` or `V1` is accepted in every External path. Routes are declared as the interface spells
 * them: the Save operations with `V1`, everything else with `v1`.
 */
const V1_OPERATIONS: Record<string, string> = Object.fromEntries(
  [
    '/V1/External/SaveDonor',
    '/V1/External/SaveCollector',
    '/V1/External/SaveReason',
    '/V1/External/SaveCampaign',
  ].map((p) => [p.toLowerCase(), p]),
);

function canonicalPath(request: Request): string {
  const path = withoutTrailingSlash(getPath(request));
  if (!/^\/[vV]1\/External\//.test(path)) return path;
  const declared = V1_OPERATIONS[path.toLowerCase()];
  return declared && declared.slice(3) === path.slice(3) ? declared : `/v1${path.slice(3)}`;
}

export interface AppOptions {
  /** Served over TLS (TLS_CERT_FILE): every answer carries Strict-Transport-Security. */
  hsts?: boolean;
  /** The terminal's web build (apps/terminal/dist/renderer), served at /terminal/. */
  terminalDir?: string;
  /** The console's build (apps/console/dist), served at /console/ (its API is /console/api). */
  consoleDir?: string;
  /** Served at /readyz: false while shutting down. */
  isReady?: () => boolean;
  /** The console API's options (the cookie is Secure with `hsts`, an https: publicUrl, or a trusted proxy's https). */
  console?: Omit<ConsoleApiOptions, 'secure'>;
}

export function createApp(deps: Deps, opts: AppOptions) {
  // Services handed only the database seal its secrets under these deps' key-encryption key.
  bindKeyEncryption(deps);
  // Rate limits live in the database: shared by every instance.
  const buckets = tokenBuckets(deps.db);
  const app = new OpenAPIHono<AppEnv>({
    getPath: canonicalPath,
    defaultHook: (result) => {
      if (!result.success) throw fromZod(result.error);
    },
  });

  app.use(requestId({ headerName: 'X-Request-Id' }));
  app.use(authenticateChallenge);
  if (opts.hsts) app.use(hsts);
  app.use('/docs', pageHeaders);
  app.use('/docs/*', pageHeaders);
  app.use('/terminal', pageHeaders);
  app.use('/terminal/*', pageHeaders);
  // The desktop terminal loads from file:// and a browser kiosk may be served elsewhere: device
  // sync answers any origin. Safe: it authenticates by credential header, never by cookie.
  app.use(
    '/v1/Device/*',
    cors({
      origin: '*',
      allowMethods: ['GET', 'POST'],
      allowHeaders: ['Authorization', 'Content-Type'],
      maxAge: 600,
    }),
  );
  app.use(async (c, next) => {
    c.set('deps', deps);
    const started = performance.now();
    await next();
    const seconds = (performance.now() - started) / 1000;
    const route = c.req.routePath || 'unmatched';
    deps.metrics.httpRequests.inc({ method: c.req.method, route, status: String(c.res.status) });
    deps.metrics.httpSeconds.observe({ method: c.req.method, route }, seconds);
    deps.logger.info(
      {
        requestId: c.var.requestId,
        method: c.req.method,
        // One-time link tokens (/console/api/links/<token>) are not written to the log.
        path: redactTokenPath(c.req.path),
        status: c.res.status,
        ms: Math.round(seconds * 10_000) / 10,
        caller: c.var.caller?.masked,
      },
      'request',
    );
  });
  const limitTo = (maxSize: number) =>
    bodyLimit({
      maxSize,
      onError: () => {
        throw new ApiError(413, ERROR_CODES.PAYLOAD_TOO_LARGE, `The body is over ${maxSize / 1024} KiB`);
      },
    });
  const externalLimit = limitTo(BODY_LIMIT);
  const pushLimit = limitTo(PUSH_BODY_LIMIT);
  app.use((c, next) =>
    canonicalPath(c.req.raw) === PUSH_PATH ? pushLimit(c, next) : externalLimit(c, next),
  );
  // A known API path with another method: 405 with Allow; a body that is not JSON: 415.
  app.use(methodAndMediaType(() => app.routes, canonicalPath));

  app.onError(errorHandler(deps));
  app.notFound(notFound);

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    if (opts.isReady && !opts.isReady()) return c.json({ status: 'shutting down' }, 503);
    try {
      await deps.db.query('SELECT 1');
      return c.json({ status: 'ready', database: deps.db.kind });
    } catch {
      return c.json({ status: 'database unreachable' }, 503);
    }
  });

  app.route('/', paymentRoutes(buckets));
  app.route('/', scheduleRoutes(buckets));
  app.route('/', peopleRoutes(buckets));
  app.route('/', catalogRoutes(buckets));
  app.route('/', deviceRoutes(buckets));
  app.route('/', reportRoutes(buckets));
  app.route('/', receiptRoutes(buckets));
  app.route('/console/api', consoleApi({ ...opts.console, secure: opts.hsts ?? false }));
  if (opts.consoleDir) app.route('/', consoleWebRoutes(opts.consoleDir));
  if (opts.terminalDir) app.route('/', terminalRoutes(opts.terminalDir));

  app.openAPIRegistry.registerComponent('securitySchemes', 'SourceGuid', {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      'The GUID of a payment source (device or external campaign): `Authorization: <SOURCE_GUID>`.',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'APIKey',
    description: 'An organisation API key, created with `npm run admin -- apikey create`.',
  });
  const documentConfig = {
    openapi: '3.1.0',
    info: {
      title: 'Kupah donation processing — External API',
      version: '1.0.0',
      description:
        'Charge, SchedulePayment, VoidPayment and the Save operations. Errors: every 4xx/5xx body is ' +
        '`{ error: { errorCode, message, fields? } }`. Limits: 64 KiB bodies, strings ≤ 256 characters ' +
        '(notes ≤ 2,000), arrays ≤ 20 items, amounts > 0 and ≤ 1,000,000 with ≤ 2 decimals, 50 requests/s per ' +
        'credential (burst 100) with 429 and Retry-After. Idempotency records are kept 30 days.',
    },
  } as const;
  let document: Record<string, unknown> | undefined;
  app.get('/openapi.json', (c) => {
    document ??= finishDocument(app.getOpenAPI31Document(documentConfig));
    return c.json(document);
  });
  app.route('/', docsRoutes());
  return app;
}
export type App = ReturnType<typeof createApp>;

/** Pages a browser renders: never framed, never sniffed, no referrer (CSP is set per page). */
const pageHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  const set = (k: string, v: string) => {
    if (!c.res.headers.has(k)) c.res.headers.set(k, v);
  };
  set('X-Content-Type-Options', 'nosniff');
  set('Referrer-Policy', 'no-referrer');
  set('X-Frame-Options', 'DENY');
};

/** The error body of every 4xx/5xx answer (decisions: no internals disclosed). */
function errorHandler(deps: Deps): ErrorHandler<AppEnv> {
  return (err, c) => {
    if (err instanceof ApiError) {
      for (const [k, v] of Object.entries(err.headers ?? {})) c.header(k, v);
      return c.json(err.body(), err.status);
    }
    if (err instanceof HTTPException && err.status < 500) {
      const status = err.status === 413 ? 413 : 400;
      const code = status === 413 ? ERROR_CODES.PAYLOAD_TOO_LARGE : ERROR_CODES.VALIDATION_FAILED;
      const message = /json/i.test(err.message) ? 'The body is not valid JSON' : err.message || 'Bad request';
      return c.json(
        {
          error: {
            errorCode: code,
            message,
            fields: status === 400 ? [{ field: '(body)', message }] : undefined,
          },
        },
        status,
      );
    }
    deps.logger.error(
      { requestId: c.var.requestId, err: { message: err.message, stack: err.stack } },
      'unhandled',
    );
    return c.json(
      {
        error: { errorCode: ERROR_CODES.INTERNAL, message: `Internal error; request id ${c.var.requestId}` },
      },
      500,
    );
  };
}

const notFound: NotFoundHandler = (c) =>
  c.json(
    { error: { errorCode: ERROR_CODES.NOT_FOUND, message: `No route ${c.req.method} ${c.req.path}` } },
    404,
  );

export interface AdminAppOptions {
  adminToken: string;
  /** Behind a reverse proxy: the admin lockout keys on the last X-Forwarded-For address. */
  trustProxy?: boolean;
  /** Served over TLS: answers carry Strict-Transport-Security. */
  hsts?: boolean;
  /** WEBHOOK_ALLOW_PRIVATE=1: webhook URLs may be http:// (development); otherwise https:// only. */
  allowInsecureWebhooks?: boolean;
  /** Console users' set-up links: the public URL they are made on, and the mailer (SMTP set). */
  consoleLinks?: ConsoleLinkOptions;
}

/**
 * The admin listener's app (ADMIN_HOST:ADMIN_PORT, loopback by default): the admin API under
 * /admin (token, lockout, audit log) and Prometheus /metrics. Never mounted on the public app.
 */
export function createAdminApp(deps: Deps, opts: AdminAppOptions) {
  bindKeyEncryption(deps);
  const app = new Hono<AppEnv>();
  app.use(requestId({ headerName: 'X-Request-Id' }));
  app.use(authenticateChallenge);
  if (opts.hsts) app.use(hsts);
  app.use(async (c, next) => {
    c.set('deps', deps);
    const started = performance.now();
    await next();
    deps.logger.info(
      {
        requestId: c.var.requestId,
        listener: 'admin',
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round(((performance.now() - started) / 1000) * 10_000) / 10,
      },
      'request',
    );
  });
  app.use(
    bodyLimit({
      maxSize: BODY_LIMIT,
      onError: () => {
        throw new ApiError(413, ERROR_CODES.PAYLOAD_TOO_LARGE, `The body is over ${BODY_LIMIT / 1024} KiB`);
      },
    }),
  );
  app.onError(errorHandler(deps));
  app.notFound(notFound);
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/metrics', async (c) =>
    c.text(await deps.metrics.registry.metrics(), 200, {
      'Content-Type': deps.metrics.registry.contentType,
    }),
  );
  app.route(
    '/admin',
    adminRoutes({
      token: opts.adminToken,
      trustProxy: opts.trustProxy ?? false,
      allowInsecureWebhooks: opts.allowInsecureWebhooks ?? false,
      consoleLinks: opts.consoleLinks ?? {},
    }),
  );
  return app;
}
export type AdminApp = ReturnType<typeof createAdminApp>;

const hsts: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set('Strict-Transport-Security', 'max-age=31536000');
};
