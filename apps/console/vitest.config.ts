import react from '@vitejs/plugin-react';
import { defineProject } from 'vitest/config';

/** The console's unit and component tests (happy-dom): fast, no server, no browser. */
export default defineProject({
  plugins: [react()],
  test: {
    name: 'console',
    include: ['src/**/*.test.{ts,tsx}'],
    environment: 'happy-dom',
    testTimeout: 20_000,
  },
});
