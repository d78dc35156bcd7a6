import { describe, expect, it } from 'vitest';
import { launchOptions, unsafeSwitches } from './launch-options.ts';

/**
 * Someone at the counter edits the terminal's shortcut or its environment to get DevTools next to
 * the bridge (and `window.kupah.secrets.reveal()`), or to load a page of their own into the
 * window that holds the bridge.
 */
describe('a packaged terminal ignores the developer switches', () => {
  const exe = ['C:\\Program Files\\Kupah Terminal\\Kupah Terminal.exe'];

  it('--devtools opens no developer tools, and is reported as ignored', () => {
    const options = launchOptions([...exe, '--devtools'], {}, true);
    expect(options.devTools).toBe(false);
    expect(options.ignored).toEqual(['--devtools']);
    // The same switch from the work tree still works (the test would be vacuous otherwise).
    expect(launchOptions([...exe, '--devtools'], {}, false).devTools).toBe(true);
  });

  it('KUPAH_RENDERER_URL loads no other page and opens no developer tools', () => {
    const env = { KUPAH_RENDERER_URL: 'http://attacker.example:5173/' };
    const options = launchOptions(exe, env, true);
    expect(options.rendererUrl).toBeNull();
    expect(options.devTools).toBe(false);
    expect(options.ignored).toEqual(['KUPAH_RENDERER_URL']);
    expect(launchOptions(exe, env, false).rendererUrl).toBe('http://attacker.example:5173/');
  });

  it('an invalid KUPAH_RENDERER_URL cannot stop a packaged terminal from starting', () => {
    expect(() => launchOptions(exe, { KUPAH_RENDERER_URL: 'javascript:alert(1)' }, true)).not.toThrow();
  });

  it('--kiosk still works', () => {
    expect(launchOptions([...exe, '--kiosk'], {}, true).kiosk).toBe(true);
  });

  it('refuses to run with a debugger, no-sandbox or any-certificate switch, in any spelling Chromium reads', () => {
    for (const arg of [
      '--remote-debugging-port=9222',
      '--remote-debugging-pipe',
      '-remote-debugging-port=9222',
      '/Remote-Debugging-Port=9222',
      '--remote-allow-origins=*',
      '--inspect=9229',
      '--inspect-brk',
      '--no-sandbox',
      '--disable-web-security',
      '--ignore-certificate-errors',
      '--ignore-certificate-errors-spki-list=abc=',
      '--js-flags=--allow-natives-syntax',
    ]) {
      expect(launchOptions([...exe, arg], {}, true).refused, arg).toHaveLength(1);
    }
    expect(launchOptions([...exe, '--remote-debugging-port=9222'], {}, false).refused).toEqual([]);
  });

  it('does not mistake ordinary arguments for debugging switches', () => {
    expect(
      unsafeSwitches([...exe, '--kiosk', '--remote-debugging', '--inspector', '/opt/kupah/inspect']),
    ).toEqual([]);
    expect(launchOptions([...exe, '--kiosk'], {}, true).refused).toEqual([]);
  });
});
