import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { appTarget } from './app-origin.ts';
import {
  allowPermission,
  type GuardedContents,
  guardWebContents,
  installPermissionPolicy,
  type PermissionSession,
} from './web-contents-guard.ts';

const file = '/app/dist/renderer-electron/index.html';
const own = pathToFileURL(file).href;

function fakeContents() {
  const listeners = new Map<string, (event: { preventDefault(): void }, url: string) => void>();
  let openHandler: ((details: { url: string }) => { action: 'deny' }) | undefined;
  const contents: GuardedContents = {
    setWindowOpenHandler: (h) => {
      openHandler = h;
    },
    on: (event: string, listener: (event: { preventDefault(): void }, url: string) => void) =>
      void listeners.set(event, listener),
  };
  const fire = (name: string, url = '') => {
    const event = { preventDefault: vi.fn() };
    listeners.get(name)!(event, url);
    return event.preventDefault.mock.calls.length > 0;
  };
  return { contents, fire, open: (url: string) => openHandler!({ url }) };
}

describe('web contents guard', () => {
  it('denies every new window', () => {
    const log = vi.fn();
    const c = fakeContents();
    guardWebContents(c.contents, appTarget(file, null), log);
    expect(c.open('https://example.org/')).toEqual({ action: 'deny' });
    expect(c.open(own)).toEqual({ action: 'deny' });
    expect(log).toHaveBeenCalledWith('refused to open a window', { url: 'https://example.org/' });
  });

  it('keeps navigation and redirects inside the app', () => {
    const c = fakeContents();
    guardWebContents(c.contents, appTarget(file, null), () => {});
    expect(c.fire('will-navigate', 'https://phish.example/login')).toBe(true);
    expect(c.fire('will-navigate', pathToFileURL('/home/user/secrets.html').href)).toBe(true);
    expect(c.fire('will-redirect', 'https://phish.example/')).toBe(true);
    expect(c.fire('will-navigate', `${own}?e2e=1`)).toBe(false);
  });

  it('refuses <webview>', () => {
    const c = fakeContents();
    guardWebContents(c.contents, appTarget(file, null), () => {});
    expect(c.fire('will-attach-webview')).toBe(true);
  });

  it('grants geolocation and nothing else', () => {
    expect(allowPermission('geolocation')).toBe(true);
    for (const p of ['media', 'notifications', 'clipboard-read', 'openExternal', 'fullscreen', 'midi', 'hid'])
      expect(allowPermission(p)).toBe(false);
    let request: Parameters<PermissionSession['setPermissionRequestHandler']>[0] | undefined;
    let check: Parameters<PermissionSession['setPermissionCheckHandler']>[0] | undefined;
    installPermissionPolicy({
      setPermissionRequestHandler: (h) => {
        request = h;
      },
      setPermissionCheckHandler: (h) => {
        check = h;
      },
    });
    const answer = vi.fn();
    request!(null, 'media', answer);
    request!(null, 'geolocation', answer);
    expect(answer.mock.calls).toEqual([[false], [true]]);
    expect(check!(null, 'geolocation')).toBe(true);
    expect(check!(null, 'notifications')).toBe(false);
  });
});
