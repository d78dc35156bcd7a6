/**
 * Builds the console once before the end-to-end tests (the production build in apps/console/dist,
 * the one the server serves). `KUPAH_E2E_NO_BUILD=1` reuses the build already there.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

export default async function setup(): Promise<void> {
  if (process.env.KUPAH_E2E_NO_BUILD === '1') return;
  const root = fileURLToPath(new URL('..', import.meta.url));
  await build({ configFile: `${root}/vite.config.ts`, root, logLevel: 'warn' });
}
