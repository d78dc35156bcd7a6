import { expect, test } from 'vitest';
import { benchmarkEngine, benchmarkEngineDetailed, benchmarkTerms } from './bench-engine.ts';
import { computeInstalments } from './index.ts';

test('benchmarkEngine runs mixed schedules and reports milliseconds', () => {
  expect(benchmarkEngine(50)).toBeGreaterThanOrEqual(0);
  const r = benchmarkEngineDetailed(320);
  expect(r.schedules).toBe(320);
  expect(r.instalments).toBeGreaterThan(320 * 30);
  // Every benchmark schedule is valid terms.
  for (let i = 0; i < 320; i++)
    expect(computeInstalments(benchmarkTerms(i)).length).toBe(benchmarkTerms(i).count);
});
