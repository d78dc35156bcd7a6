/**
 * The desktop build's platform (the `electron` condition of `#platform`, chosen by
 * `vite build --mode electron`): the bridge is the one object the preload exposed as
 * `window.kupah`. There is no web fallback in this build: a desktop app whose preload did not run
 * must say so, not quietly become a browser terminal without the OS secret store or the printer.
 */
import type { TerminalBridge } from '@kupah/contracts';

export const PLATFORM = 'electron';

export class MissingPreloadError extends Error {
  constructor() {
    super('The desktop terminal started without its preload (window.kupah is missing): reinstall the app.');
    this.name = 'MissingPreloadError';
  }
}

export function platformBridge(): TerminalBridge {
  const bridge = typeof window !== 'undefined' ? window.kupah : undefined;
  if (!bridge) throw new MissingPreloadError();
  return bridge;
}

/** The app loads from disk (app.asar): nothing to precache, no service worker. */
export function startOfflineSupport(): void {}
