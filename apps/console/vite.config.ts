import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The console is served by the backend at /console/ (apps/server/src/console/console-web.ts), so
 * its assets are built for that base. Every screen and the chart are their own chunks (React.lazy),
 * so the first screen loads only the shell, the sign-in form or Today's tables.
 */
export default defineConfig({
  root: '.',
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'chrome120',
    // The server's CSP allows no inline script: keep the module preload polyfill out of index.html.
    modulePreload: { polyfill: false },
    // dist/.vite/manifest.json: which chunks each screen loads (scripts/first-screen-size.mjs).
    manifest: true,
  },
  server: {
    port: 5174,
    proxy: { '/console/api': 'http://127.0.0.1:3000' },
  },
});
