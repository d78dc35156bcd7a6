import { defineProject } from 'vitest/config';

/**
 * Tests of the terminal against a real server: the sync fault tests (the data layer in Node with
 * fake-indexeddb) and the end-to-end tests (the web build in Debian's Chromium). The renderer is
 * built once before them.
 */
export default defineProject({
  test: {
    name: 'terminal-e2e',
    include: ['e2e/**/*.test.ts'],
    globalSetup: ['e2e/build-renderer.ts'],
    testTimeout: 240_000,
    hookTimeout: 120_000,
    // Each file starts its own server processes; two at once would fight for the 2 cores.
    fileParallelism: false,
    // After the in-process tests and the server's process tests: never beside another worker.
    sequence: { groupOrder: 2 },
  },
});
