import { describe, expect, it } from 'vitest';
import { restartBudget } from './restart-budget.ts';

describe('restart budget', () => {
  it('allows max restarts in any window, then again once the oldest leaves it', () => {
    let now = 0;
    const budget = restartBudget(3, 60_000, () => now);
    const taken = [0, 10_000, 20_000].map((at) => {
      now = at;
      return budget.take();
    });
    expect(taken).toEqual([true, true, true]);
    now = 59_999;
    expect(budget.take()).toBe(false);
    now = 60_000;
    expect(budget.take()).toBe(true);
    expect(budget.take()).toBe(false);
  });

  it('refusals do not count against later restarts', () => {
    let now = 0;
    const budget = restartBudget(1, 1_000, () => now);
    expect(budget.take()).toBe(true);
    for (now = 1; now < 1_000; now += 100) expect(budget.take()).toBe(false);
    now = 1_000;
    expect(budget.take()).toBe(true);
  });
});
