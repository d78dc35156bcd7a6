import { defineProject } from 'vitest/config';
import { PROCESS_TESTS } from './vitest.config.ts';

/**
 * The server's tests that start server processes (SIGKILL faults, crash recovery, TLS, the admin
 * listener): one file at a time, after the in-process tests (`sequence.groupOrder`), so that a
 * process under test never competes with a second worker for the 2 cores.
 */
export default defineProject({
  test: {
    name: 'server-processes',
    include: PROCESS_TESTS,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    fileParallelism: false,
    sequence: { groupOrder: 1 },
  },
});
