import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { launchOptions } from './launch-options.ts';

describe('launch options', () => {
  it('default to a windowed terminal on the built renderer, without developer tools', () => {
    expect(launchOptions(['/usr/bin/kupah'], {}, false)).toEqual({
      kiosk: false,
      rendererUrl: null,
      devTools: false,
      ignored: [],
      refused: [],
    });
  });

  it('read --kiosk and --devtools (from the work tree)', () => {
    expect(launchOptions(['electron', '.', '--kiosk'], {}, false).kiosk).toBe(true);
    expect(launchOptions(['electron', '.', '--devtools'], {}, false).devTools).toBe(true);
  });

  it('load the dev server from KUPAH_RENDERER_URL (with developer tools)', () => {
    expect(launchOptions([], { KUPAH_RENDERER_URL: ' http://localhost:5173/ ' }, false)).toEqual({
      kiosk: false,
      rendererUrl: 'http://localhost:5173/',
      devTools: true,
      ignored: [],
      refused: [],
    });
    expect(launchOptions([], { KUPAH_RENDERER_URL: '' }, false).rendererUrl).toBeNull();
  });

  it('refuse a renderer URL that is not http(s)', () => {
    expect(() => launchOptions([], { KUPAH_RENDERER_URL: 'file:///etc/passwd' }, false)).toThrow(ZodError);
    expect(() => launchOptions([], { KUPAH_RENDERER_URL: 'javascript:alert(1)' }, false)).toThrow(ZodError);
  });
});
