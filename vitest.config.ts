import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      'packages/*',
      'apps/server',
      'apps/terminal',
      'apps/terminal/vitest.e2e.config.ts',
      'apps/console',
      'apps/console/vitest.e2e.config.ts',
    ],
  },
});
