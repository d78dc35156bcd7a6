/**
 * The web bridge, for the web variant of `#platform` (src/renderer/platform/) and for tests and
 * tools. The app itself takes its bridge from `#platform`, chosen when it is built.
 */
export { createWebBridge, type WebBridgeEnv } from './web-bridge.ts';
