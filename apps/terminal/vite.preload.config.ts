import { defineConfig } from 'vite';

/**
 * The preload, bundled as one CommonJS file (`dist/preload/preload.cjs`): a sandboxed preload
 * cannot load ES modules and can require nothing but `electron` (and a few shims), so the
 * contracts it imports are bundled in.
 */
export default defineConfig({
  build: {
    ssr: 'src/preload/preload.ts',
    outDir: 'dist/preload',
    emptyOutDir: true,
    target: 'chrome140',
    sourcemap: true,
    minify: false,
    rolldownOptions: {
      external: ['electron'],
      treeshake: { moduleSideEffects: false, manualPureFunctions: ['z'] },
      output: { format: 'cjs', entryFileNames: 'preload.cjs' },
    },
  },
  ssr: { noExternal: true, target: 'webworker' },
});
