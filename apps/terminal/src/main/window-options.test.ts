import { BRIDGE_OS_SECRETS_ARG } from '@kupah/contracts';
import { describe, expect, it } from 'vitest';
import { printWindowOptions, SECURE_WEB_PREFERENCES, windowOptions } from './window-options.ts';

const settings = {
  preload: '/app/dist/preload/preload.cjs',
  kiosk: false,
  devTools: false,
  osSecrets: false,
};

describe('window options', () => {
  it('isolate and sandbox the renderer, with the preload as its only bridge', () => {
    const prefs = windowOptions(settings).webPreferences;
    expect(prefs).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      preload: settings.preload,
      devTools: false,
    });
  });

  it('open in kiosk mode when asked', () => {
    expect(windowOptions(settings).kiosk).toBe(false);
    expect(windowOptions({ ...settings, kiosk: true }).kiosk).toBe(true);
  });

  it('tell the preload whether the OS protects secrets through a command-line switch', () => {
    expect(windowOptions(settings).webPreferences?.additionalArguments).toEqual([]);
    expect(windowOptions({ ...settings, osSecrets: true }).webPreferences?.additionalArguments).toEqual([
      BRIDGE_OS_SECRETS_ARG,
    ]);
  });

  it('give the receipt window the same protections, no preload and no script', () => {
    const options = printWindowOptions();
    expect(options.show).toBe(false);
    expect(options.webPreferences).toMatchObject({ ...SECURE_WEB_PREFERENCES, javascript: false });
    expect(options.webPreferences?.preload).toBeUndefined();
  });
});
