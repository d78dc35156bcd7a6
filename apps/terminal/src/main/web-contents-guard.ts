/**
 * Rules for every web contents the app creates (the terminal's window and the hidden receipt
 * windows): no new windows, no navigation away from the app, no <webview>, and no permission
 * but geolocation (where the donation was taken; the renderer asks, the cashier allows).
 */
import type { AppTarget } from './app-origin.ts';
import { isAppUrl } from './app-origin.ts';

interface PreventableEvent {
  preventDefault(): void;
}

/** The part of `WebContents` the guard uses. */
export interface GuardedContents {
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void;
  on(
    event: 'will-navigate' | 'will-redirect',
    listener: (event: PreventableEvent, url: string) => void,
  ): void;
  on(event: 'will-attach-webview', listener: (event: PreventableEvent) => void): void;
}

export function guardWebContents(
  contents: GuardedContents,
  target: AppTarget,
  log: (message: string, fields?: Record<string, unknown>) => void,
): void {
  contents.setWindowOpenHandler(({ url }) => {
    log('refused to open a window', { url });
    return { action: 'deny' };
  });
  const stayInApp = (event: PreventableEvent, url: string) => {
    if (isAppUrl(url, target)) return;
    event.preventDefault();
    log('refused to navigate away from the app', { url });
  };
  contents.on('will-navigate', stayInApp);
  contents.on('will-redirect', stayInApp);
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

/** The only permission the terminal ever grants. */
export const allowPermission = (permission: string): boolean => permission === 'geolocation';

/** The part of `Session` the permission policy uses. */
export interface PermissionSession {
  setPermissionRequestHandler(
    handler: (webContents: unknown, permission: string, callback: (granted: boolean) => void) => void,
  ): void;
  setPermissionCheckHandler(handler: (webContents: unknown, permission: string) => boolean): void;
}

export function installPermissionPolicy(session: PermissionSession): void {
  session.setPermissionRequestHandler((_contents, permission, callback) =>
    callback(allowPermission(permission)),
  );
  session.setPermissionCheckHandler((_contents, permission) => allowPermission(permission));
}
