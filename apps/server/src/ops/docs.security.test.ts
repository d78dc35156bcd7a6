/**
 * /docs and /terminal/ are pages a browser renders on the server's origin: nothing may load from
 * a third party (a CDN serving other code would run with this origin's rights), and the pages
 * may not be framed or sniffed.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { chromiumAvailable, launchChromium, requireChromium } from '@kupah/browser-testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.ts';
import { createHarness, type Harness } from '../testing/harness.ts';

/** Any absolute or protocol-relative URL (what a page could load from elsewhere). */
const EXTERNAL = /(?:[a-z][a-z0-9+.-]*:)?\/\/[a-z0-9[]/i;

describe('/docs and /terminal/ load nothing from elsewhere and carry strict headers', () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    h = await createHarness('pglite');
    dir = mkdtempSync(join(tmpdir(), 'kupah-docs-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('GET /docs: no external URL, no inline script; a CSP with scripts from this origin only, no eval; its assets are served here', async () => {
    const r = await h.request('GET', '/docs');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    const html = String(r.body);
    expect(html).not.toMatch(EXTERNAL);
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/i); // no inline script
    expect(html).not.toMatch(/\son[a-z]+=/i); // no inline handlers

    const csp = r.headers.get('content-security-policy') ?? '';
    const directives: Record<string, string[]> = Object.fromEntries(
      csp.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name, values];
      }),
    );
    expect(directives['default-src']).toEqual(["'none'"]);
    expect(directives['script-src']).toEqual(["'self'"]);
    expect(directives['connect-src']).toEqual(["'self'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    // No host, no scheme but data: images, no eval anywhere; inline is allowed for styles alone.
    expect(csp).not.toMatch(/unsafe-eval|https?:|\*/);
    expect(
      Object.entries(directives)
        .filter(([, v]) => v.includes("'unsafe-inline'"))
        .map(([k]) => k),
    ).toEqual(['style-src']);

    const scripts = [...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/gi)].map((m) => m[1]!);
    const styles = [...html.matchAll(/<link[^>]*\shref="([^"]+)"/gi)].map((m) => m[1]!);
    expect(scripts).toEqual(['/docs/swagger-ui-bundle.js', '/docs/reference.js']);
    // Swagger UI is the npm package's own file, served as it is (pinned by the lockfile).
    const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
    for (const src of [...scripts, ...styles]) {
      const asset = await h.request('GET', src);
      expect(asset.status, src).toBe(200);
      expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
      expect(asset.headers.get('content-type')).toMatch(
        scripts.includes(src) ? /^text\/javascript/ : /^text\/css/,
      );
      const body = String(asset.body);
      if (src === '/docs/reference.js') {
        expect(body).not.toMatch(EXTERNAL);
        expect(body).not.toMatch(/\beval\(|new Function|innerHTML|document\.write/);
      } else {
        expect(body).toBe(readFileSync(join(dist, src.replace('/docs/', '')), 'utf8'));
      }
    }
  });

  it.skipIf(!chromiumAvailable())(
    'in Chromium: the reference renders every operation, nothing is requested from another origin, no CSP violation',
    async () => {
      requireChromium();
      const base = await h.listen();
      const chromium = await launchChromium();
      try {
        const page = await chromium.browser.newPage();
        const elsewhere: string[] = [];
        const violations: string[] = [];
        page.on('request', (req) => {
          if (!req.url().startsWith(base) && !req.url().startsWith('data:')) elsewhere.push(req.url());
        });
        page.on('console', (m) => {
          if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
        });
        await page.goto(`${base}/docs`);
        await page.locator('.opblock-summary-path').first().waitFor({ timeout: 30_000 });
        const paths = await page.locator('.opblock-summary-path').allTextContents();
        expect(paths.map((p) => p.replace(/\u200b/g, ''))).toContain('/v1/External/Charge');
        expect(paths.length).toBeGreaterThanOrEqual(8);
        expect(elsewhere).toEqual([]);
        expect(violations).toEqual([]);
      } finally {
        await chromium.close();
      }
    },
    60_000,
  );

  it.each(['/docs', '/terminal/'])('%s is not sniffed, not framed, sends no referrer', async (path) => {
    const app = createApp(h.deps, { terminalDir: dir });
    const r = await app.request(path);
    expect(r.status).toBe(200);
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('referrer-policy')).toBe('no-referrer');
    expect(r.headers.get('x-frame-options')).toBe('DENY');
    expect(r.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
  });

  it('/terminal/: the service worker and manifest of the offline web build are served from here, never cached for long', async () => {
    writeFileSync(join(dir, 'sw.js'), 'self.addEventListener("fetch", () => {});');
    writeFileSync(join(dir, 'manifest.webmanifest'), '{"name":"Kupah"}');
    const app = createApp(h.deps, { terminalDir: dir });
    const sw = await app.request('/terminal/sw.js');
    expect(sw.status).toBe(200);
    expect(sw.headers.get('content-type')).toMatch(/javascript/);
    // A service worker cached for a year would keep an old terminal alive: it is looked for each time.
    expect(sw.headers.get('cache-control')).toBe('no-cache');
    expect(sw.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    const manifest = await app.request('/terminal/manifest.webmanifest');
    expect(manifest.status).toBe(200);
    expect(manifest.headers.get('content-type')).toMatch(/manifest\+json|application\/json/);
  });

  it('without TLS no Strict-Transport-Security is sent; with TLS every answer has it', async () => {
    expect((await h.request('GET', '/healthz')).headers.get('strict-transport-security')).toBeNull();
    const tls = createApp(h.deps, { hsts: true });
    for (const path of ['/healthz', '/docs', '/nope']) {
      expect((await tls.request(path)).headers.get('strict-transport-security'), path).toBe(
        'max-age=31536000',
      );
    }
  });
});
