/**
 * The test hook (`window.__kupah`: the data layer, which discards, unpairs and voids without the
 * manager PIN) must not exist in the renderer the server serves and Electron packs. It used to be
 * switched on by `?e2e=1` in the address; now only a build made for tests has it.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type UserConfig } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import viteConfig, { DESKTOP_MODE, TEST_HOOKS_MODE } from '../../vite.config.ts';

const APP = fileURLToPath(new URL('../../', import.meta.url));

/** The JavaScript of a renderer built like `vite build [--mode …]`, into a folder of its own. */
async function builtJavaScript(outDir: string, mode?: string): Promise<string> {
  await build({
    configFile: join(APP, 'vite.config.ts'),
    root: join(APP, 'src/renderer'),
    logLevel: 'silent',
    ...(mode ? { mode } : {}),
    build: { outDir, emptyOutDir: true },
  });
  const assets = join(outDir, 'assets');
  return readdirSync(assets)
    .filter((f) => f.endsWith('.js'))
    .map((f) => readFileSync(join(assets, f), 'utf8'))
    .join('\n');
}

const configFor = (command: 'build' | 'serve', mode: string) =>
  (viteConfig as (env: { command: 'build' | 'serve'; mode: string }) => UserConfig)({ command, mode });

describe('the test hook is not in the production renderer', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kupah-renderer-build-'));
  let production = '';
  let testBuild = '';

  let desktop = '';

  beforeAll(async () => {
    production = await builtJavaScript(join(dir, 'production'));
    testBuild = await builtJavaScript(join(dir, 'e2e'), TEST_HOOKS_MODE);
    desktop = await builtJavaScript(join(dir, 'electron'), DESKTOP_MODE);
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a production build has no window.__kupah, whatever the address says', () => {
    expect(production.length).toBeGreaterThan(10_000);
    expect(production).not.toContain('__kupah');
    expect(production).not.toContain('__KUPAH_TEST_HOOKS__');
  });

  it('a build made for the tests has it (so the check above can fail)', () => {
    expect(testBuild).toContain('__kupah');
  });

  it('the web build (npm run build, the server), the desktop build (electron-builder) and test builds go to different folders', () => {
    expect(configFor('build', 'production').build?.outDir).toBe('../../dist/renderer');
    expect(configFor('build', DESKTOP_MODE).build?.outDir).toBe('../../dist/renderer-electron');
    expect(configFor('build', DESKTOP_MODE).define).toEqual({ __KUPAH_TEST_HOOKS__: 'false' });
    expect(configFor('build', TEST_HOOKS_MODE).build?.outDir).toBe('../../dist/renderer-e2e');
    expect(configFor('build', 'production').define).toEqual({ __KUPAH_TEST_HOOKS__: 'false' });
    // Any other mode is a production-like build too: only the test mode opts in.
    expect(configFor('build', 'staging').define).toEqual({ __KUPAH_TEST_HOOKS__: 'false' });
    expect(configFor('serve', 'development').define).toEqual({ __KUPAH_TEST_HOOKS__: 'true' });
  });

  // The platform is chosen when the renderer is built (`#platform` in package.json): the desktop
  // app carries neither the web bridge nor the service worker, and the web build cannot pick up a
  // `window.kupah` that a page script defines.
  it('the desktop build has the preload bridge only; the web build the web bridge and the service worker only', () => {
    expect(desktop.length).toBeGreaterThan(10_000);
    expect(desktop).toContain('started without its preload');
    expect(desktop).not.toContain('geolocation');
    expect(desktop).not.toContain('serviceWorker');
    expect(existsSync(join(dir, 'electron', 'sw.js'))).toBe(false);
    expect(existsSync(join(dir, 'electron', 'manifest.webmanifest'))).toBe(false);

    expect(production).toContain('geolocation');
    expect(production).toContain('serviceWorker');
    expect(production).not.toContain('started without its preload');
    expect(existsSync(join(dir, 'production', 'sw.js'))).toBe(true);
  });
});
