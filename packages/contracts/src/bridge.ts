/**
 * The terminal's bridge: the one API object the Electron preload exposes to the renderer (and
 * that the web build implements with browser APIs). Messages the main process receives are
 * parsed with these schemas.
 */
import { z } from 'zod';

export const bridgeLocation = z.object({
  locationName: z.string().max(256).nullable(),
  latitude: z.number().min(-90).max(90).nullable(),
  longitude: z.number().min(-180).max(180).nullable(),
});
export type BridgeLocation = z.infer<typeof bridgeLocation>;

/** A receipt as printed: already formatted text lines (never a full card number). */
export const receiptPrint = z.object({
  title: z.string().max(256),
  lines: z.array(z.string().max(256)).max(80),
  direction: z.enum(['ltr', 'rtl']),
});
export type ReceiptPrint = z.infer<typeof receiptPrint>;

export interface TerminalBridge {
  readonly platform: 'electron' | 'web';
  appVersion(): Promise<string>;
  /** The host name (Electron) unless the cashier set a name; the web build returns null. */
  hostName(): Promise<string | null>;
  timeZone(): string;
  /** Position if the platform offers one and the user allowed it, else null. */
  location(): Promise<BridgeLocation | null>;
  printReceipt(receipt: ReceiptPrint): Promise<{ printed: boolean }>;
  /** OS-level secret protection (Electron safeStorage); null where unavailable. */
  readonly secrets: {
    protect(plain: string): Promise<string>;
    reveal(protectedText: string): Promise<string>;
  } | null;
  setKiosk(on: boolean): Promise<void>;
}
