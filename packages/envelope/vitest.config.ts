import { defineProject } from 'vitest/config';

export default defineProject({ test: { name: 'envelope', testTimeout: 60_000 } });
