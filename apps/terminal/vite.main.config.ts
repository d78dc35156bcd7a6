import { builtinModules } from 'node:module';
import { defineConfig } from 'vite';

/**
 * The Electron main process, bundled for Electron's Node (ESM, `dist/main/main.js`, which
 * package.json's `main` names). Everything but `electron` and Node's own modules is bundled in,
 * so the packaged app needs no node_modules. The preload is built by vite.preload.config.ts:
 * a sandboxed preload must be a single CommonJS file.
 */
export default defineConfig({
  build: {
    ssr: 'src/main/main.ts',
    outDir: 'dist/main',
    emptyOutDir: true,
    target: 'node22',
    sourcemap: true,
    minify: false,
    rolldownOptions: {
      external: ['electron', ...builtinModules, ...builtinModules.map((m) => `node:${m}`)],
      output: { format: 'es', entryFileNames: 'main.js' },
    },
  },
  ssr: { noExternal: true, target: 'node' },
});
