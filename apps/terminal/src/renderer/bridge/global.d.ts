/**
 * `window.kupah`: the bridge the Electron preload exposes; absent in a browser (getBridge() then
 * builds the web implementation). The renderer sees the machine only through this type.
 */
import type { TerminalBridge } from '@kupah/contracts';

declare global {
  interface Window {
    readonly kupah?: TerminalBridge;
  }
}
