/**
 * The main process's side of the bridge: one `ipcMain.handle` per call. Every message is
 * checked twice before anything happens: it must come from the app's own page, and its
 * arguments must parse with the call's schema from `@kupah/contracts`. A message that fails
 * either is rejected with the error; nothing is done with it.
 */
import {
  BRIDGE_CHANNELS,
  type BridgeCall,
  type BridgeReplies,
  type BridgeRequest,
  bridgeRequests,
  type ReceiptPrint,
} from '@kupah/contracts';
import type { z } from 'zod';
import type { SenderEvent } from './app-origin.ts';

/** The part of `ipcMain` the bridge uses. */
export interface IpcHandle {
  handle(channel: string, listener: (event: SenderEvent, ...args: unknown[]) => Promise<unknown>): void;
}

export interface BridgeDeps {
  appVersion(): string;
  hostName(): string;
  printReceipt(receipt: ReceiptPrint): Promise<{ printed: boolean }>;
  /** Null when the OS cannot protect secrets (the preload then exposes `secrets: null`). */
  secrets: { protect(plain: string): Promise<string>; reveal(protectedText: string): Promise<string> } | null;
  setKiosk(on: boolean): void;
  isTrustedSender(event: SenderEvent): boolean;
}

type Handlers = { [K in BridgeCall]: (...args: BridgeRequest<K>) => Promise<BridgeReplies[K]> };

function secretsOf(deps: BridgeDeps): NonNullable<BridgeDeps['secrets']> {
  if (!deps.secrets) throw new Error('The operating system cannot protect secrets on this machine');
  return deps.secrets;
}

/** The schemas seen per call, so that indexing with a generic call keeps the call's own types. */
const requestSchemas: { [K in BridgeCall]: z.ZodType<BridgeRequest<K>> } = bridgeRequests;

/** Parses `args` as call `call`'s arguments (throws the ZodError when they do not fit). */
export function parseRequest<K extends BridgeCall>(call: K, args: unknown[]): BridgeRequest<K> {
  return requestSchemas[call].parse(args);
}

export function registerBridgeHandlers(ipcMain: IpcHandle, deps: BridgeDeps): void {
  const handlers: Handlers = {
    appVersion: async () => deps.appVersion(),
    hostName: async () => deps.hostName(),
    // Desktops have no GPS, and an IP-based guess would send the donor's position to a third
    // party: the cashier's location setting covers it.
    location: async () => null,
    printReceipt: (receipt) => deps.printReceipt(receipt),
    protectSecret: (plain) => secretsOf(deps).protect(plain),
    revealSecret: (protectedText) => secretsOf(deps).reveal(protectedText),
    setKiosk: async (on) => deps.setKiosk(on),
  };
  const register = <K extends BridgeCall>(call: K) => {
    const run: Handlers[K] = handlers[call];
    ipcMain.handle(BRIDGE_CHANNELS[call], async (event, ...args) => {
      if (!deps.isTrustedSender(event))
        throw new Error(`Refused ${call}: the message did not come from the terminal's own page`);
      return run(...parseRequest(call, args));
    });
  };
  for (const call of Object.keys(BRIDGE_CHANNELS) as BridgeCall[]) register(call);
}
