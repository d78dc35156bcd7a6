import { defineConfig } from 'vitest/config';

/**
 * Group 0 (the in-process tests of every package and app) runs two files at a time: vitest's
 * default on 2 cores is one. The tests that start server processes or drive Chromium run after
 * it, one file at a time and one project at a time (their projects' `sequence.groupOrder`).
 */
export default defineConfig({
  test: {
    maxWorkers: 2,
    projects: [
      'packages/*',
      'apps/server/vitest.config.ts',
      'apps/server/vitest.processes.config.ts',
      'apps/terminal',
      'apps/terminal/vitest.e2e.config.ts',
      'apps/console',
      'apps/console/vitest.e2e.config.ts',
    ],
  },
});
