import { configDefaults, defineProject } from 'vitest/config';

/** Test files that start server processes: their own project (vitest.processes.config.ts). */
export const PROCESS_TESTS = [
  'src/main.test.ts',
  'src/payments/charge-faults.test.ts',
  'src/receipts/crash.test.ts',
  'src/schedules/scheduler-crash.test.ts',
  'src/security/admin.security.test.ts',
  'src/security/tls.security.test.ts',
  'src/webhooks/crash.test.ts',
  'src/webhooks/readme-example.test.ts',
];

export default defineProject({
  test: {
    name: 'server',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    exclude: [...configDefaults.exclude, ...PROCESS_TESTS],
  },
});
