/**
 * Printing a receipt without a dialog: a hidden window lays it out and prints it silently to the
 * system's default printer. Receipts print one at a time, in the order asked, and a printer that
 * never answers cannot hold the terminal: after a timeout the receipt counts as not printed.
 */
import type { ReceiptPrint } from '@kupah/contracts';
import { receiptDataUrl } from './receipt-html.ts';

/** The part of a hidden `BrowserWindow` printing uses. */
export interface PrintWindow {
  loadURL(url: string): Promise<void>;
  webContents: {
    print(
      options: { silent: boolean; printBackground: boolean },
      callback: (success: boolean, failureReason: string) => void,
    ): void;
  };
  isDestroyed(): boolean;
  destroy(): void;
}

export interface PrinterDeps {
  openHiddenWindow(): PrintWindow;
  log(message: string, fields?: Record<string, unknown>): void;
  timeoutMs?: number;
}

export type ReceiptPrinter = (receipt: ReceiptPrint) => Promise<{ printed: boolean }>;

const PRINT_TIMEOUT_MS = 60_000;

export function createReceiptPrinter(deps: PrinterDeps): ReceiptPrinter {
  const timeoutMs = deps.timeoutMs ?? PRINT_TIMEOUT_MS;
  let queue: Promise<unknown> = Promise.resolve();

  async function printOne(receipt: ReceiptPrint): Promise<{ printed: boolean }> {
    const win = deps.openHiddenWindow();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await win.loadURL(receiptDataUrl(receipt));
      const printed = await new Promise<boolean>((resolve) => {
        timer = setTimeout(() => {
          deps.log('receipt not printed: the printer did not answer', { timeoutMs });
          resolve(false);
        }, timeoutMs);
        win.webContents.print({ silent: true, printBackground: false }, (success, failureReason) => {
          if (!success) deps.log('receipt not printed', { failureReason });
          resolve(success);
        });
      });
      return { printed };
    } catch (error) {
      deps.log('receipt not printed', { error: String(error) });
      return { printed: false };
    } finally {
      clearTimeout(timer);
      if (!win.isDestroyed()) win.destroy();
    }
  }

  return (receipt) => {
    const result = queue.then(() => printOne(receipt));
    queue = result.catch(() => undefined);
    return result;
  };
}
