import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The mode of a renderer built for the end-to-end tests and the benchmarks (`vite build --mode e2e`):
 * the only build with the test hooks (`window.__kupah`: the data layer, which can discard, unpair
 * and void without the manager PIN). It goes to its own folder, so the production build in
 * dist/renderer, the one the server serves and Electron packs, never has them.
 */
export const TEST_HOOKS_MODE = 'e2e';

// The renderer is served by the backend at /terminal/ and loaded by Electron from disk.
export default defineConfig(({ command, mode }) => {
  const testHooks = command === 'serve' || mode === TEST_HOOKS_MODE;
  return {
    root: 'src/renderer',
    base: './',
    plugins: [react()],
    // A compile-time constant: in a production build the hook is dead code and left out.
    define: { __KUPAH_TEST_HOOKS__: JSON.stringify(testHooks) },
    build: {
      outDir: mode === TEST_HOOKS_MODE ? '../../dist/renderer-e2e' : '../../dist/renderer',
      emptyOutDir: true,
      target: 'chrome120',
    },
    server: { port: 5173 },
  };
});
