/**
 * Browser entry of the sync benchmark: the terminal's own data layer (Dexie on Chromium's
 * IndexedDB, the envelope, the sync loop), exposed to the benchmark driver.
 */
import type { TerminalBridge } from '@kupah/contracts';
import { createTerminalData } from '@kupah/terminal-core';

const bridge: TerminalBridge = {
  platform: 'web',
  appVersion: async () => 'bench',
  hostName: async () => 'Bench kiosk',
  timeZone: () => Intl.DateTimeFormat().resolvedOptions().timeZone,
  location: async () => ({ locationName: 'Bench hall', latitude: 40.7, longitude: -74 }),
  printReceipt: async () => ({ printed: false }),
  secrets: null,
  setKiosk: async () => {},
};

(globalThis as Record<string, unknown>).kupahBench = { createTerminalData, bridge };
document.title = 'ready';
