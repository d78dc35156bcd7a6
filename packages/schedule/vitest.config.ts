import { defineProject } from 'vitest/config';

export default defineProject({ test: { name: 'schedule', testTimeout: 60_000 } });
