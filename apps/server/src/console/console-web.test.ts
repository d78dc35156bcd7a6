import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterAll, describe, expect, it } from 'vitest';
import { CONSOLE_CSP, consoleWebRoutes } from './console-web.ts';

describe('the console build at /console/', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kupah-console-web-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><script type="module" src="/console/assets/index-abc.js"></script>',
  );
  writeFileSync(join(dir, 'assets', 'index-abc.js'), 'console.log(1)');
  const app = new Hono()
    .route('/', consoleWebRoutes(dir))
    .get('/console/api/session', (c) => c.json({ api: true }));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('serves index.html with the strict CSP, never cached', async () => {
    const r = await app.request('/console/');
    expect(r.status).toBe(200);
    expect(await r.text()).toContain('index-abc.js');
    expect(r.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    for (const d of [
      "script-src 'self'",
      "connect-src 'self'",
      "img-src 'self' data:",
      "frame-ancestors 'none'",
    ]) {
      expect(CONSOLE_CSP).toContain(d);
    }
    expect(CONSOLE_CSP).not.toContain('unsafe-inline');
    expect(r.headers.get('cache-control')).toBe('no-cache');
    expect(r.headers.get('x-frame-options')).toBe('DENY');
  });

  it('serves hashed assets as immutable', async () => {
    const r = await app.request('/console/assets/index-abc.js');
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('redirects /console to /console/ and leaves /console/api to the API', async () => {
    const r = await app.request('/console');
    expect(r.status).toBe(301);
    expect(r.headers.get('location')).toBe('/console/');
    const api = await app.request('/console/api/session');
    expect(await api.json()).toEqual({ api: true });
    expect(api.headers.get('content-security-policy')).toBeNull();
  });

  it('says how to build it when it is not built', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'kupah-console-none-'));
    const r = await new Hono().route('/', consoleWebRoutes(empty)).request('/console/');
    expect(r.status).toBe(404);
    expect(((await r.json()) as { error: { message: string } }).error.message).toContain(
      'npm run build -w @kupah/console',
    );
    rmSync(empty, { recursive: true, force: true });
  });
});
