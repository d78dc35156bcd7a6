// @vitest-environment happy-dom
import type { TerminalBridge } from '@kupah/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { MissingPreloadError, platformBridge } from './electron.ts';

const preloadBridge = { platform: 'electron' } as TerminalBridge;

// Which variant a build gets is checked on real builds (src/main/renderer-build.security.test.ts).
describe('the Electron variant of #platform', () => {
  afterEach(() => Reflect.deleteProperty(window, 'kupah'));

  it('is the bridge the preload exposed', () => {
    Object.defineProperty(window, 'kupah', { configurable: true, value: preloadBridge });
    expect(platformBridge()).toBe(preloadBridge);
  });

  it('without a preload it says so instead of falling back to the web bridge', () => {
    expect(() => platformBridge()).toThrow(MissingPreloadError);
  });
});
