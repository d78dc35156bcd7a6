/**
 * The preload: the renderer's only view of the machine. It exposes one object, `window.kupah`,
 * assembled from small slices, each a fixed set of calls on fixed channels. The renderer never
 * gets `ipcRenderer` or any way to name a channel itself, so a script injected into the page can
 * ask for exactly what the bridge offers and nothing more (and the main process still checks it).
 *
 * It runs sandboxed: only `electron` can be required, so everything else is bundled in.
 */
import {
  BRIDGE_CHANNELS,
  BRIDGE_OS_SECRETS_ARG,
  type BridgeCall,
  type BridgeReplies,
  type BridgeRequest,
  type TerminalBridge,
} from '@kupah/contracts';
import { contextBridge, ipcRenderer } from 'electron';

/** One call to the main process (internal: never exposed, so the page cannot pick the channel). */
function call<K extends BridgeCall>(name: K, ...args: BridgeRequest<K>): Promise<BridgeReplies[K]> {
  return ipcRenderer.invoke(BRIDGE_CHANNELS[name], ...args);
}

const device = {
  platform: 'electron',
  appVersion: () => call('appVersion'),
  hostName: () => call('hostName'),
  timeZone: () => Intl.DateTimeFormat().resolvedOptions().timeZone,
  location: () => call('location'),
} as const satisfies Pick<TerminalBridge, 'platform' | 'appVersion' | 'hostName' | 'timeZone' | 'location'>;

const printing = {
  printReceipt: (receipt) => call('printReceipt', receipt),
} as const satisfies Pick<TerminalBridge, 'printReceipt'>;

const osSecrets = {
  protect: (plain: string) => call('protectSecret', plain),
  reveal: (protectedText: string) => call('revealSecret', protectedText),
} as const satisfies NonNullable<TerminalBridge['secrets']>;

const secrets = {
  // Decided by the main process (it alone can ask safeStorage) before this window opened.
  secrets: process.argv.includes(BRIDGE_OS_SECRETS_ARG) ? osSecrets : null,
} as const satisfies Pick<TerminalBridge, 'secrets'>;

const screen = {
  setKiosk: (on) => call('setKiosk', on),
} as const satisfies Pick<TerminalBridge, 'setKiosk'>;

const kupahBridge = { ...device, ...printing, ...secrets, ...screen } as const satisfies TerminalBridge;

contextBridge.exposeInMainWorld('kupah', kupahBridge);
