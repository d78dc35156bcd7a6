import { describe, expect, it, vi } from 'vitest';
import { claimSingleInstance, type FocusableWindow, type InstanceApp } from './single-instance.ts';

function fakeApp(locked: boolean) {
  let secondInstance: (() => void) | undefined;
  const app = {
    requestSingleInstanceLock: vi.fn(() => locked),
    on: vi.fn((_: 'second-instance', l: () => void) => {
      secondInstance = l;
    }),
    quit: vi.fn(),
  } satisfies InstanceApp;
  return { app, secondLaunch: () => secondInstance!() };
}

const fakeWindow = (minimized: boolean) =>
  ({
    isDestroyed: vi.fn(() => false),
    isMinimized: vi.fn(() => minimized),
    restore: vi.fn(),
    show: vi.fn(),
    focus: vi.fn(),
  }) satisfies FocusableWindow;

describe('single instance', () => {
  it('a second instance quits without starting anything', () => {
    const { app } = fakeApp(false);
    expect(claimSingleInstance(app, () => null)).toBe(false);
    expect(app.quit).toHaveBeenCalled();
    expect(app.on).not.toHaveBeenCalled();
  });

  it('the first instance brings its window to the front when launched again', () => {
    const { app, secondLaunch } = fakeApp(true);
    const win = fakeWindow(true);
    let current: FocusableWindow | null = null;
    expect(claimSingleInstance(app, () => current)).toBe(true);
    expect(app.quit).not.toHaveBeenCalled();
    secondLaunch(); // before the window exists: nothing to focus
    current = win;
    secondLaunch();
    expect(win.restore).toHaveBeenCalledTimes(1);
    expect(win.show).toHaveBeenCalledTimes(1);
    expect(win.focus).toHaveBeenCalledTimes(1);
  });

  it('a window that is not minimised is only focused', () => {
    const { app, secondLaunch } = fakeApp(true);
    const win = fakeWindow(false);
    claimSingleInstance(app, () => win);
    secondLaunch();
    expect(win.restore).not.toHaveBeenCalled();
    expect(win.focus).toHaveBeenCalled();
  });
});
