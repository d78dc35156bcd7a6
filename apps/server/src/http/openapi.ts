import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { errorResponse } from '@kupah/contracts';
import { type Context, Hono } from 'hono';
import type { z } from 'zod';

const err = (description: string) => ({
  description,
  content: { 'application/json': { schema: errorResponse } },
});

/** The error answers every External API operation can give (decisions: HTTP statuses and errors). */
export const ERROR_RESPONSES = {
  400: err('Validation failed: every failing field is listed in error.fields'),
  401: err('Missing, unknown or revoked credential'),
  403: err('The credential does not belong to the organisation in the body'),
  404: err('Unknown record'),
  409: err('uniqueTransactionId reused with a different body, or the record is in a state that forbids this'),
  413: err('Body over 64 KiB'),
  429: err('Rate limit exceeded; see Retry-After'),
  500: err('Unexpected error (no internals are disclosed)'),
} as const;

export const jsonBody = <T extends z.ZodType>(schema: T, description: string) => ({
  body: { content: { 'application/json': { schema } }, required: true, description },
});

export const jsonOk = <T extends z.ZodType>(schema: T, description: string) => ({
  200: { description, content: { 'application/json': { schema } } },
});

/**
 * The body as validated by the route's schema. TypeScript's inference through Hono's input types
 * gives up (`never`) on the two largest schemas; this keeps the exact output type of the schema.
 */
export function validBody<S extends z.ZodType>(
  req: { valid: (target: never) => unknown },
  _schema: S,
): z.output<S> {
  return req.valid('json' as never) as z.output<S>;
}

/**
 * The API reference at /docs: Swagger UI (`swagger-ui-dist`, pinned by the lockfile) served from
 * node_modules by this server, with a start script of ours; no CDN, nothing fetched from anywhere
 * but this origin. The page runs under a Content-Security-Policy: scripts from this origin only,
 * no inline script, no eval, not frameable. Swagger UI sets `style` attributes as it renders, so
 * styles need 'unsafe-inline' (styles only: no script can run from them); its icons are data: URIs.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Kupah External API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
<script src="/docs/swagger-ui-bundle.js" defer></script>
<script src="/docs/reference.js" defer></script>
</head>
<body>
<main id="doc"><p>Loading the API reference from <a href="/openapi.json">/openapi.json</a>…</p></main>
</body>
</html>
`;

/** Starts Swagger UI on /openapi.json (a file of its own: no inline script under the CSP). */
const DOCS_JS = `'use strict';
window.addEventListener('DOMContentLoaded', function () {
  window.SwaggerUIBundle({ url: '/openapi.json', dom_id: '#doc', deepLinking: true, tryItOutEnabled: false });
});
`;

const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const asset = (file: string) => readFileSync(join(swaggerDir, file), 'utf8');

/** GET /docs (the page), its start script and Swagger UI's script and style, each with the CSP. */
export function docsRoutes() {
  const files = {
    js: asset('swagger-ui-bundle.js'),
    css: asset('swagger-ui.css'),
  };
  const page = (body: string, type: string) => (c: Context) =>
    c.body(body, 200, {
      'Content-Type': type,
      'Content-Security-Policy': DOCS_CSP,
      'Cache-Control': 'no-cache',
    });
  return new Hono()
    .get('/docs', page(DOCS_HTML, 'text/html; charset=utf-8'))
    .get('/docs/reference.js', page(DOCS_JS, 'text/javascript; charset=utf-8'))
    .get('/docs/swagger-ui-bundle.js', page(files.js, 'text/javascript; charset=utf-8'))
    .get('/docs/swagger-ui.css', page(files.css, 'text/css; charset=utf-8'));
}
