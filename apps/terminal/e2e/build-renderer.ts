/**
 * Builds the terminal's web build for the end-to-end tests once before them (they load it from a
 * static server of their own). It is the test build (`--mode e2e`, in dist/renderer-e2e): the one
 * with `window.__kupah`, the hook the tests drive the data layer through. The production build in
 * dist/renderer has no such hook and is left alone.
 * `KUPAH_E2E_NO_BUILD=1` reuses the build in dist/renderer-e2e (when iterating on the tests alone).
 */
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { TEST_HOOKS_MODE } from '../vite.config.ts';

export default async function setup(): Promise<void> {
  if (process.env.KUPAH_E2E_NO_BUILD === '1') return;
  const root = fileURLToPath(new URL('..', import.meta.url));
  await build({
    configFile: `${root}/vite.config.ts`,
    root: `${root}/src/renderer`,
    mode: TEST_HOOKS_MODE,
    logLevel: 'warn',
  });
}
