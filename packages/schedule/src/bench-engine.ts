/**
 * Micro-benchmark of the schedule engine (not a test; wired to `npm run bench -- schedules`).
 * Imported by path (`packages/schedule/src/bench-engine.ts`): it reads a clock, so it is not part of
 * the package's entry point.
 */
import { rdFromYmd, rdToCivil } from './civil.ts';
import { computeInstalments, type ScheduleTerms } from './engine.ts';

/** One year of instalments per frequency (Annually/Annually_Hebrew: this year's and next year's). */
const YEAR_OF: readonly Pick<ScheduleTerms, 'frequency' | 'count' | 'specialDays' | 'anniversaryRule'>[] = [
  { frequency: 'Daily', count: 365 },
  { frequency: 'Weekly', count: 52 },
  { frequency: 'Every_3rd_week', count: 18 },
  { frequency: 'Every_4th_week', count: 13 },
  { frequency: 'Monthly', count: 12 },
  { frequency: 'Every_2nd_month', count: 6 },
  { frequency: 'Every_3rd_month', count: 4 },
  { frequency: 'Annually', count: 2 },
  { frequency: 'Monthly_Hebrew', count: 12 },
  { frequency: 'Every_2nd_Hebrew_month', count: 6 },
  { frequency: 'Every_3rd_Hebrew_month', count: 4 },
  { frequency: 'Annually_Hebrew', count: 2 },
  { frequency: 'Annually_Hebrew', count: 2, anniversaryRule: 'yahrzeit' },
  { frequency: 'Yizkor', count: 4 },
  { frequency: 'Special_Days', count: 52, specialDays: { presets: ['erev_shabbat'], dates: [] } },
  {
    frequency: 'Special_Days',
    count: 30,
    specialDays: { presets: ['rosh_chodesh', 'fast_days', 'chanukah', 'purim'], dates: ['2031-01-01'] },
  },
];

/** The `i`-th of the benchmark's mixed schedules (deterministic: start dates spread over 2026–2030). */
export function benchmarkTerms(i: number): ScheduleTerms {
  const shape = YEAR_OF[i % YEAR_OF.length] as (typeof YEAR_OF)[number];
  const startRd = rdFromYmd(2026, 1, 1) + ((i * 7919) % 1826);
  return {
    ...shape,
    startDate: rdToCivil(startRd),
    firstMinor: 1800 + (i % 100),
    perPaymentMinor: 1800,
    il: i % 3 === 0,
    shabbatShift: i % 5 !== 0,
  };
}

export interface BenchmarkResult {
  schedules: number;
  instalments: number;
  ms: number;
}

export function benchmarkEngineDetailed(n: number): BenchmarkResult {
  const started = performance.now();
  let instalments = 0;
  for (let i = 0; i < n; i++) instalments += computeInstalments(benchmarkTerms(i)).length;
  return { schedules: n, instalments, ms: performance.now() - started };
}
