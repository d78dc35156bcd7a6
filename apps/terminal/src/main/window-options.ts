/**
 * The options of the terminal's window and of the hidden window receipts print from. The
 * renderer gets no Node, no Electron and no way to turn the sandbox off: the preload's bridge is
 * all it sees of the machine.
 */
import { BRIDGE_OS_SECRETS_ARG } from '@kupah/contracts';
import type { BrowserWindowConstructorOptions, WebPreferences } from 'electron';

/** The settings no window of this app may weaken. */
export const SECURE_WEB_PREFERENCES = {
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  nodeIntegrationInSubFrames: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  webviewTag: false,
  // A file dropped on the window would otherwise navigate away from the app.
  navigateOnDragDrop: false,
  // A page stuck in an alert() loop can be dismissed.
  safeDialogs: true,
  // Donor names and addresses are not sent to a dictionary service.
  spellcheck: false,
} as const satisfies WebPreferences;

export interface MainWindowSettings {
  preload: string;
  kiosk: boolean;
  devTools: boolean;
  /** Whether the preload should expose `secrets` (the OS can protect them). */
  osSecrets: boolean;
}

export function windowOptions(settings: MainWindowSettings): BrowserWindowConstructorOptions {
  return {
    title: 'Kupah Terminal',
    width: 1280,
    height: 800,
    minWidth: 800,
    minHeight: 600,
    backgroundColor: '#ffffff',
    autoHideMenuBar: true,
    kiosk: settings.kiosk,
    webPreferences: {
      ...SECURE_WEB_PREFERENCES,
      preload: settings.preload,
      devTools: settings.devTools,
      additionalArguments: settings.osSecrets ? [BRIDGE_OS_SECRETS_ARG] : [],
    },
  };
}

/** A hidden window that only lays out one receipt: no preload, no script at all. */
export function printWindowOptions(): BrowserWindowConstructorOptions {
  return {
    show: false,
    width: 400,
    height: 800,
    webPreferences: { ...SECURE_WEB_PREFERENCES, javascript: false, devTools: false },
  };
}
