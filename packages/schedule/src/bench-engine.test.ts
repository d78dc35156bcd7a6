import { expect, test } from 'vitest';
import { benchmarkEngineDetailed, benchmarkTerms } from './bench-engine.ts';
import { computeInstalments } from './index.ts';

test('the benchmark runs valid, mixed schedules and counts their instalments', () => {
  const r = benchmarkEngineDetailed(320);
  expect(r.schedules).toBe(320);
  expect(r.instalments).toBeGreaterThan(320 * 30);
  // Every benchmark schedule is valid terms.
  for (let i = 0; i < 320; i++)
    expect(computeInstalments(benchmarkTerms(i)).length).toBe(benchmarkTerms(i).count);
});
