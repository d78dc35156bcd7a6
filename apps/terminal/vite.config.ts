import react from '@vitejs/plugin-react';
import { defaultClientConditions, defineConfig } from 'vite';
import { VitePWA } from 'vite-plugin-pwa';

/**
 * The mode of a renderer built for the end-to-end tests and the benchmarks (`vite build --mode e2e`):
 * the only build with the test hooks (`window.__kupah`: the data layer, which can discard, unpair
 * and void without the manager PIN). It goes to its own folder, so the production build in
 * dist/renderer, the one the server serves and Electron packs, never has them.
 */
export const TEST_HOOKS_MODE = 'e2e';

/**
 * The mode of the renderer Electron loads from disk (`vite build --mode electron`, run by
 * `npm run build:desktop` and `npm run terminal`): `#platform` resolves to the Electron variant
 * (the preload's bridge, no service worker) through the `electron` condition, and the output goes
 * to dist/renderer-electron. Every other build is the web build, with the web bridge and Workbox.
 */
export const DESKTOP_MODE = 'electron';

function outDirFor(mode: string): string {
  if (mode === TEST_HOOKS_MODE) return '../../dist/renderer-e2e';
  if (mode === DESKTOP_MODE) return '../../dist/renderer-electron';
  return '../../dist/renderer';
}

// The renderer is served by the backend at /terminal/ and loaded by Electron from disk.
export default defineConfig(({ command, mode }) => {
  const testHooks = command === 'serve' || mode === TEST_HOOKS_MODE;
  const desktop = mode === DESKTOP_MODE;
  return {
    root: 'src/renderer',
    base: './',
    resolve: {
      conditions: desktop ? ['electron', ...defaultClientConditions] : [...defaultClientConditions],
    },
    plugins: [
      react(),
      // Offline-first web build: Workbox precaches the whole app (generateSW), so a reload or a
      // reboot with no network opens the terminal with its queue. A new version waits until the
      // terminal is between donations (offline/update-when-idle.ts applies it); the
      // manifest makes the terminal installable on a kiosk. Electron loads from disk: its build
      // has neither the plugin nor the registration.
      !desktop &&
        VitePWA({
          registerType: 'prompt',
          injectRegister: false,
          manifest: {
            name: 'Kupah donation terminal',
            short_name: 'Kupah',
            description: 'Donation point of sale: cards, ACH and charity cards, online or offline',
            start_url: './',
            scope: './',
            display: 'standalone',
            background_color: '#ffffff',
            theme_color: '#1f4e79',
            icons: [{ src: 'icon.svg', sizes: 'any', type: 'image/svg+xml', purpose: 'any' }],
          },
          workbox: {
            globPatterns: ['**/*.{js,css,html,svg,webmanifest}'],
            navigateFallback: 'index.html',
            cleanupOutdatedCaches: true,
            // Never answer API calls from a cache: the terminal talks to its server for real or not at all.
            navigateFallbackDenylist: [/^\/v1\//i, /^\/admin/],
          },
        }),
    ],
    // A compile-time constant: in a production build the hook is dead code and left out.
    define: { __KUPAH_TEST_HOOKS__: JSON.stringify(testHooks) },
    build: {
      outDir: outDirFor(mode),
      emptyOutDir: true,
      target: 'chrome120',
    },
    server: { port: 5173 },
  };
});
