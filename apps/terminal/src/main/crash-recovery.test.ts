import { describe, expect, it, vi } from 'vitest';
import { type RenderGone, stoppedPageUrl, watchRendererCrashes } from './crash-recovery.ts';
import { restartBudget } from './restart-budget.ts';

function fakeContents() {
  let listener: ((event: unknown, details: RenderGone) => void) | undefined;
  let destroyed = false;
  return {
    contents: {
      on: (_: 'render-process-gone', l: typeof listener) => {
        listener = l;
      },
      isDestroyed: () => destroyed,
    },
    crash: (reason = 'crashed') => listener!({}, { reason, exitCode: 139 }),
    destroy: () => {
      destroyed = true;
    },
  };
}

describe('crash recovery', () => {
  it('reopens the page after a crash, up to the budget, then shows that the terminal stopped', () => {
    let now = 0;
    const c = fakeContents();
    const deps = {
      budget: restartBudget(3, 60_000, () => now),
      reopen: vi.fn(),
      giveUp: vi.fn(),
      log: vi.fn(),
    };
    watchRendererCrashes(c.contents, deps);
    c.crash('oom');
    c.crash('crashed');
    c.crash('killed');
    expect(deps.reopen).toHaveBeenCalledTimes(3);
    expect(deps.giveUp).not.toHaveBeenCalled();
    c.crash();
    expect(deps.reopen).toHaveBeenCalledTimes(3);
    expect(deps.giveUp).toHaveBeenCalledTimes(1);
    expect(deps.log).toHaveBeenLastCalledWith(expect.stringContaining('budget spent'), {
      reason: 'crashed',
      exitCode: 139,
    });
    now = 61_000;
    c.crash();
    expect(deps.reopen).toHaveBeenCalledTimes(4);
  });

  it('does nothing for a window that is already gone', () => {
    const c = fakeContents();
    const deps = { budget: restartBudget(3, 60_000), reopen: vi.fn(), giveUp: vi.fn(), log: vi.fn() };
    watchRendererCrashes(c.contents, deps);
    c.destroy();
    c.crash();
    expect(deps.reopen).not.toHaveBeenCalled();
    expect(deps.giveUp).not.toHaveBeenCalled();
  });

  it('the stopped page is static text with no script', () => {
    const url = stoppedPageUrl();
    expect(url.startsWith('data:text/html;charset=utf-8,')).toBe(true);
    const html = decodeURIComponent(url.slice(url.indexOf(',') + 1));
    expect(html).toContain('The terminal stopped');
    expect(html).toContain("default-src 'none'");
    expect(html).not.toContain('<script');
  });
});
