import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { launchOptions } from './launch-options.ts';

describe('launch options', () => {
  it('default to a windowed terminal on the built renderer, without developer tools', () => {
    expect(launchOptions(['/usr/bin/kupah'], {})).toEqual({
      kiosk: false,
      rendererUrl: null,
      devTools: false,
    });
  });

  it('read --kiosk and --devtools', () => {
    expect(launchOptions(['electron', '.', '--kiosk'], {}).kiosk).toBe(true);
    expect(launchOptions(['electron', '.', '--devtools'], {}).devTools).toBe(true);
  });

  it('load the dev server from KUPAH_RENDERER_URL (with developer tools)', () => {
    expect(launchOptions([], { KUPAH_RENDERER_URL: ' http://localhost:5173/ ' })).toEqual({
      kiosk: false,
      rendererUrl: 'http://localhost:5173/',
      devTools: true,
    });
    expect(launchOptions([], { KUPAH_RENDERER_URL: '' }).rendererUrl).toBeNull();
  });

  it('refuse a renderer URL that is not http(s)', () => {
    expect(() => launchOptions([], { KUPAH_RENDERER_URL: 'file:///etc/passwd' })).toThrow(ZodError);
    expect(() => launchOptions([], { KUPAH_RENDERER_URL: 'javascript:alert(1)' })).toThrow(ZodError);
  });
});
