import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The renderer is served by the backend at /terminal/ and loaded by Electron from disk.
export default defineConfig({
  root: 'src/renderer',
  base: './',
  plugins: [react()],
  build: { outDir: '../../dist/renderer', emptyOutDir: true, target: 'chrome120' },
  server: { port: 5173 },
});
