/** The bridge module's entry: `getBridge()` for the app, `createWebBridge()` for tests and tools. */
export { getBridge } from './get-bridge.ts';
export { createWebBridge, type WebBridgeEnv } from './web-bridge.ts';
