/**
 * Builds the console once before the end-to-end tests (the production build in apps/console/dist,
 * the one the server serves), and the terminal's web build if it is missing. `KUPAH_E2E_NO_BUILD=1` reuses the build already there.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';

export default async function setup(): Promise<void> {
  if (process.env.KUPAH_E2E_NO_BUILD === '1') return;
  const root = fileURLToPath(new URL('..', import.meta.url));
  // Vitest runs with NODE_ENV=test, which would give React's development build: build as
  // `npm run build` does.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ configFile: `${root}/vite.config.ts`, root, mode: 'production', logLevel: 'warn' });
    // The terminal's web build (served at /terminal/): a terminal is paired from the console and
    // takes a donation. Built once if missing, as `npm start` does.
    const terminal = fileURLToPath(new URL('../../terminal', import.meta.url));
    if (!existsSync(`${terminal}/dist/renderer/index.html`)) {
      await build({
        configFile: `${terminal}/vite.config.ts`,
        root: `${terminal}/src/renderer`,
        mode: 'production',
        logLevel: 'warn',
      });
    }
  } finally {
    process.env.NODE_ENV = nodeEnv;
  }
}
