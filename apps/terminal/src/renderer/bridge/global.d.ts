/**
 * `window.kupah`: the bridge the Electron preload exposes. Only the Electron build reads it; the web
 * build is built with the web implementation (`#platform`). The renderer sees the machine only
 * through this type.
 */
import type { TerminalBridge } from '@kupah/contracts';

declare global {
  interface Window {
    readonly kupah?: TerminalBridge;
  }
  /**
   * Whether this build exposes the test hooks (`window.__kupah`): true for the dev server and
   * `vite build --mode e2e`, false in production builds (vite.config.ts defines it).
   */
  const __KUPAH_TEST_HOOKS__: boolean;
}
