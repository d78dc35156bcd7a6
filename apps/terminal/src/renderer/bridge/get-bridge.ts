/**
 * The renderer's only view of the machine: the bridge the Electron preload exposed as
 * `window.kupah`, else the web implementation made of browser APIs. Asked once; every caller
 * gets the same object.
 */
import type { TerminalBridge } from '@kupah/contracts';
import { createWebBridge } from './web-bridge.ts';

let bridge: TerminalBridge | null = null;

export function getBridge(): TerminalBridge {
  bridge ??= (typeof window !== 'undefined' ? window.kupah : undefined) ?? createWebBridge();
  return bridge;
}
