/**
 * The web build's platform (the default `#platform` variant): the bridge made of browser APIs and
 * the service worker that lets the terminal open with no network. Chosen at build time by the
 * `imports` of apps/terminal/package.json; the Electron build (`vite build --mode electron`)
 * resolves `#platform` to ./electron.ts instead, so none of this ships in the desktop app.
 */
import type { TerminalBridge } from '@kupah/contracts';
import { createWebBridge } from '../bridge/web-bridge.ts';
import { registerServiceWorker } from '../offline/register.ts';

export const PLATFORM = 'web';

export function platformBridge(): TerminalBridge {
  return createWebBridge();
}

/** Precache the app (Workbox), so a reload or reboot with no network opens the terminal. */
export function startOfflineSupport(): void {
  registerServiceWorker();
}
