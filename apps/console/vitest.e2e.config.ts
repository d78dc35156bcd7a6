import { defineProject } from 'vitest/config';

/**
 * The console end to end: its production build (built once before, e2e/build-console.ts) served
 * by a real server process, driven in Debian's Chromium.
 */
export default defineProject({
  test: {
    name: 'console-e2e',
    include: ['e2e/**/*.test.ts'],
    globalSetup: ['e2e/build-console.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    // After the terminal's end-to-end tests: one browser project at a time.
    sequence: { groupOrder: 3 },
  },
});
