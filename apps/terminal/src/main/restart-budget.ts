/**
 * How many times a crashed renderer is brought back: a few per minute. A page that crashes on
 * load would otherwise reload forever, burning the CPU and hiding the fault from the cashier.
 */

export interface RestartBudget {
  /** Spend one restart at `now`; false when the window's allowance is used up. */
  take(): boolean;
}

export function restartBudget(max: number, windowMs: number, now: () => number = Date.now): RestartBudget {
  const spent: number[] = [];
  return {
    take() {
      const at = now();
      while (spent.length > 0 && at - spent[0]! >= windowMs) spent.shift();
      if (spent.length >= max) return false;
      spent.push(at);
      return true;
    },
  };
}

/** Three renderer restarts in any minute, then the terminal shows that it stopped. */
export const RENDERER_RESTARTS = { max: 3, windowMs: 60_000 } as const;
