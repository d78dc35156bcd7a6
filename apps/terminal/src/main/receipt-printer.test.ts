import type { ReceiptPrint } from '@kupah/contracts';
import { describe, expect, it, vi } from 'vitest';
import { createReceiptPrinter, type PrintWindow } from './receipt-printer.ts';

const receipt: ReceiptPrint = { title: 'Receipt', lines: ['18.00 USD'], direction: 'ltr' };

type Answer = { success: boolean; reason?: string } | 'never' | ((done: (ok: boolean) => void) => void);

function fakeWindows(answers: Answer[], loadFails = false) {
  const opened: Array<PrintWindow & { urls: string[]; destroyed: boolean }> = [];
  const open = () => {
    const answer = answers[opened.length] ?? { success: true };
    const win = {
      urls: [] as string[],
      destroyed: false,
      loadURL: vi.fn(async (url: string) => {
        win.urls.push(url);
        if (loadFails) throw new Error('load failed');
      }),
      webContents: {
        print: vi.fn((options: { silent: boolean }, callback: (success: boolean, reason: string) => void) => {
          expect(options.silent).toBe(true);
          if (answer === 'never') return;
          if (typeof answer === 'function') answer((ok) => callback(ok, ok ? '' : 'failed'));
          else callback(answer.success, answer.reason ?? '');
        }),
      },
      isDestroyed: () => win.destroyed,
      destroy: vi.fn(() => {
        win.destroyed = true;
      }),
    };
    opened.push(win);
    return win;
  };
  return { open, opened };
}

describe('receipt printer', () => {
  it('prints silently from a hidden window showing the receipt, then closes it', async () => {
    const w = fakeWindows([{ success: true }]);
    const print = createReceiptPrinter({ openHiddenWindow: w.open, log: () => {} });
    expect(await print(receipt)).toEqual({ printed: true });
    expect(w.opened).toHaveLength(1);
    expect(decodeURIComponent(w.opened[0]!.urls[0]!)).toContain('<p>18.00 USD</p>');
    expect(w.opened[0]!.destroyed).toBe(true);
  });

  it('reports a failed print, and a page that did not load, as not printed', async () => {
    const log = vi.fn();
    const failed = fakeWindows([{ success: false, reason: 'No printers available' }]);
    expect(await createReceiptPrinter({ openHiddenWindow: failed.open, log })(receipt)).toEqual({
      printed: false,
    });
    expect(log).toHaveBeenCalledWith('receipt not printed', { failureReason: 'No printers available' });
    const broken = fakeWindows([], true);
    expect(await createReceiptPrinter({ openHiddenWindow: broken.open, log })(receipt)).toEqual({
      printed: false,
    });
    expect(broken.opened[0]!.destroyed).toBe(true);
  });

  it('gives up on a printer that never answers', async () => {
    const w = fakeWindows(['never']);
    const print = createReceiptPrinter({ openHiddenWindow: w.open, log: () => {}, timeoutMs: 20 });
    expect(await print(receipt)).toEqual({ printed: false });
    expect(w.opened[0]!.destroyed).toBe(true);
  });

  it('prints one receipt at a time, in order', async () => {
    const finish: Array<(ok: boolean) => void> = [];
    const w = fakeWindows([(done) => finish.push(done), (done) => finish.push(done)]);
    const print = createReceiptPrinter({ openHiddenWindow: w.open, log: () => {} });
    const first = print({ ...receipt, title: 'first' });
    const second = print({ ...receipt, title: 'second' });
    await vi.waitFor(() => expect(finish).toHaveLength(1));
    expect(w.opened).toHaveLength(1);
    finish[0]!(false);
    expect(await first).toEqual({ printed: false });
    await vi.waitFor(() => expect(finish).toHaveLength(2));
    expect(decodeURIComponent(w.opened[1]!.urls[0]!)).toContain('second');
    finish[1]!(true);
    expect(await second).toEqual({ printed: true });
  });
});
