/**
 * Builds the terminal's web build once before the end-to-end tests (they load it from the server).
 * `KUPAH_E2E_NO_BUILD=1` reuses the build in dist/ (when iterating on the tests alone).
 */
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

export default async function setup(): Promise<void> {
  if (process.env.KUPAH_E2E_NO_BUILD === '1') return;
  const root = fileURLToPath(new URL('..', import.meta.url));
  await build({ configFile: `${root}/vite.config.ts`, root: `${root}/src/renderer`, logLevel: 'warn' });
}
