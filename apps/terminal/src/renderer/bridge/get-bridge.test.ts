// @vitest-environment happy-dom
import type { TerminalBridge } from '@kupah/contracts';
import { afterEach, describe, expect, it, vi } from 'vitest';

const electronBridge = { platform: 'electron' } as TerminalBridge;

describe('getBridge', () => {
  afterEach(() => {
    Reflect.deleteProperty(window, 'kupah');
    vi.resetModules();
  });

  it('uses the preload bridge in Electron', async () => {
    Object.defineProperty(window, 'kupah', { configurable: true, value: electronBridge });
    const { getBridge } = await import('./get-bridge.ts');
    expect(getBridge()).toBe(electronBridge);
  });

  it('builds the web bridge in a browser, once', async () => {
    const { getBridge } = await import('./index.ts');
    const bridge = getBridge();
    expect(bridge.platform).toBe('web');
    expect(getBridge()).toBe(bridge);
  });
});
