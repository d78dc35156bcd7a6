/**
 * Printing text lines (a receipt, a shift report) through the bridge, in the interface's
 * direction, and the note that says whether it printed (a printer fault is a note, never a throw).
 */
import type { TerminalBridge } from '@kupah/contracts';
import type { TFunction } from 'i18next';

export async function printLines(
  bridge: Pick<TerminalBridge, 'printReceipt'>,
  t: TFunction,
  lang: string,
  title: string,
  lines: string[],
): Promise<{ printed: boolean; note: string }> {
  try {
    const r = await bridge.printReceipt({ title, lines, direction: lang === 'he' ? 'rtl' : 'ltr' });
    return { printed: r.printed, note: r.printed ? t('result.printed') : t('result.notPrinted') };
  } catch {
    return { printed: false, note: t('result.notPrinted') };
  }
}
