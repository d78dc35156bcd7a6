// @vitest-environment happy-dom
/** Donations being confirmed with the card processor, as the cashier sees them, in English and Hebrew. */

import { testSettings } from '@kupah/terminal-core/testing';
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { ReactNode } from 'react';
import { I18nextProvider } from 'react-i18next';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type TestTerminalData,
  testBridge,
  testItem,
  testTerminalData,
} from '../../../test/test-terminal-data.ts';
import { ServicesContext } from '../app-context.ts';
import { StatusBar } from '../components/status-bar.tsx';
import { applyLanguage, i18n } from '../i18n/index.ts';
import { EMPTY_SUMMARY, emptyDraft, useTerminal } from '../store/terminal-store.ts';
import { QueueScreen } from './queue-screen.tsx';
import { ResultScreen } from './result-screen.tsx';

const settings = testSettings({ coverFeePercent: 0 });

const PENDING = { errorCode: 'PAYMENT_PENDING', message: 'The card processor has not answered yet' };
const confirmingItem = () =>
  testItem({
    state: 'queued',
    attempts: 1,
    amountMinor: 1800,
    error: PENDING,
    lastAttemptAt: new Date().toISOString(),
  });

function mount(data: TestTerminalData, node: ReactNode) {
  return render(
    <I18nextProvider i18n={i18n}>
      <ServicesContext.Provider value={{ data, bridge: testBridge() }}>{node}</ServicesContext.Provider>
    </I18nextProvider>,
  );
}

afterEach(async () => {
  cleanup();
  await applyLanguage('en');
  useTerminal.setState({ summary: EMPTY_SUMMARY, result: null, waiting: false });
});

describe('the queue: voids', () => {
  it('a void row says which receipt it voids; the voided payment reads "Voided", not "Done voided"', async () => {
    const paid = testItem({ state: 'done', receiptNum: 'R77', amountMinor: 1800 });
    const voiding = testItem({
      kind: 'void',
      state: 'done',
      currency: null,
      method: null,
      amountMinor: 0,
      request: { receiptNum: 'R77', reason: 'entered twice' },
      display: { donorName: null, brand: null, last4: null, frequency: null, collectorAccountNum: null },
    });
    mount(testTerminalData({ settings, items: [paid, voiding] }), <QueueScreen />);
    fireEvent.click(await screen.findByTestId('queue-tab-done'));
    const rows = await screen.findAllByTestId('queue-item');
    const voidRow = rows.find((r) => r.getAttribute('data-kind') === 'void')!;
    const paidRow = rows.find((r) => r.getAttribute('data-kind') === 'charge')!;
    expect(within(voidRow).getByTestId('queue-title').textContent).toBe('Void of receipt R77');
    expect(voidRow.textContent).not.toMatch(/Void\s*Void/);
    expect(within(paidRow).getByTestId('queue-state').textContent).toBe('Voided');
    expect(paidRow.textContent).not.toMatch(/Done/);
  });
});

describe('the queue: being confirmed', () => {
  function queueWith() {
    const confirming = confirmingItem();
    const waiting = testItem({ state: 'queued', amountMinor: 500 });
    const declined = testItem({
      state: 'declined',
      attempts: 1,
      error: { errorCode: 'CARD_DECLINED', message: 'Insufficient funds' },
    });
    const data = testTerminalData({ settings, items: [confirming, waiting, declined] });
    mount(data, <QueueScreen />);
    return { confirming, waiting, declined };
  }
  const count = (tab: string) => screen.getByTestId(`queue-tab-${tab}`).querySelector('.count')?.textContent;

  it('English: a tab of its own, apart from the errors and the waiting; labelled, explained, not to be retried or discarded', async () => {
    const { confirming, waiting } = queueWith();
    await waitFor(() => expect(count('confirming')).toBe('1'));
    expect(screen.getByTestId('queue-tab-confirming').textContent).toContain('Being confirmed');
    // Not among the errors, not a decline, not waiting to send, not expiring.
    expect(count('error')).toBe('0');
    expect(count('declined')).toBe('1');
    expect(count('pending')).toBe('1');
    expect(count('expiring')).toBe('0');
    expect(count('sending')).toBe('0');
    const pendingRows = screen.getAllByTestId('queue-item');
    expect(pendingRows).toHaveLength(1);
    expect(pendingRows[0]!.textContent).toContain(waiting.localRef);

    fireEvent.click(screen.getByTestId('queue-tab-confirming'));
    expect(screen.getByTestId('confirming-explainer').textContent).toContain(
      'Do not charge the donors again',
    );
    const row = screen.getByTestId('queue-item');
    expect(row.getAttribute('data-confirming')).toBe('true');
    expect(row.className).toContain('state-confirming');
    expect(row.textContent).toContain(confirming.localRef);
    expect(within(row).getByTestId('queue-state').textContent).toBe('Being confirmed');
    expect(within(row).getByTestId('queue-item-confirming').textContent).toBe(
      'Being confirmed with the card processor: do not charge again. Checked automatically.',
    );
    expect(within(row).queryByTestId('queue-item-error')).toBeNull();
    expect(within(row).queryByTestId('send-now')).toBeNull();
    expect(within(row).queryByTestId('discard')).toBeNull();
    expect(within(row).queryByTestId('retry')).toBeNull();
    expect(within(row).queryByTestId('queue-expires')).toBeNull();
  });

  it('Hebrew: "בבירור מול חברת הסליקה" on the tab and on the item', async () => {
    await applyLanguage('he');
    queueWith();
    await waitFor(() => expect(count('confirming')).toBe('1'));
    expect(screen.getByTestId('queue-tab-confirming').textContent).toContain('בבירור מול חברת הסליקה');
    fireEvent.click(screen.getByTestId('queue-tab-confirming'));
    const row = screen.getByTestId('queue-item');
    expect(within(row).getByTestId('queue-state').textContent).toBe('בבירור מול חברת הסליקה');
    expect(within(row).getByTestId('queue-item-confirming').textContent).toContain('אין לחייב שוב');
    expect(screen.getByTestId('confirming-explainer').textContent).toContain('חברת הסליקה טרם אישרה');
  });
});

describe('the status bar: being confirmed', () => {
  const summary = {
    ...EMPTY_SUMMARY,
    pending: 3,
    pendingTotals: { USD: 1800 + 1800 + 500 },
    confirming: 2,
    confirmingTotals: { USD: 3600 },
  };

  it('counts them apart from what waits to be sent, and never as declined', () => {
    useTerminal.setState({ settings, summary });
    mount(testTerminalData({ settings }), <StatusBar collectorName={null} />);
    expect(screen.getByTestId('queue-count').textContent).toBe('1 waiting to send ($5.00)');
    expect(screen.getByTestId('confirming-count').textContent).toBe('2 being confirmed ($36.00)');
    expect(screen.queryByTestId('declined-count')).toBeNull();
  });

  it('in Hebrew', async () => {
    await applyLanguage('he');
    useTerminal.setState({
      settings,
      summary: { ...summary, pending: 1, confirming: 1, confirmingTotals: { USD: 1800 } },
    });
    mount(testTerminalData({ settings }), <StatusBar collectorName={null} />);
    expect(screen.getByTestId('confirming-count').textContent).toContain('בבירור מול חברת הסליקה');
    expect(screen.getByTestId('queue-count').textContent).toBe('אין פריטים ממתינים');
  });
});

describe('the status bar: Send now, for everyone (no PIN)', () => {
  it('shows while something waits or the terminal is offline, and starts a sync at once', () => {
    useTerminal.setState({
      settings,
      summary: { ...EMPTY_SUMMARY, pending: 2, pendingTotals: { USD: 3600 } },
      status: { ...useTerminal.getState().status, online: true, phase: 'waiting' },
    });
    const data = testTerminalData({ settings });
    let syncs = 0;
    data.syncNow = async () => {
      syncs++;
    };
    mount(data, <StatusBar collectorName={null} />);
    fireEvent.click(screen.getByTestId('send-now'));
    expect(syncs).toBe(1);
  });

  it('is not offered when nothing waits and the terminal is online, nor while a sync runs', () => {
    useTerminal.setState({
      settings,
      summary: EMPTY_SUMMARY,
      status: { ...useTerminal.getState().status, online: true, phase: 'idle' },
    });
    mount(testTerminalData({ settings }), <StatusBar collectorName={null} />);
    expect(screen.queryByTestId('send-now')).toBeNull();
    cleanup();
    useTerminal.setState({
      summary: { ...EMPTY_SUMMARY, pending: 1, pendingTotals: { USD: 100 } },
      status: { ...useTerminal.getState().status, online: true, phase: 'pushing' },
    });
    mount(testTerminalData({ settings }), <StatusBar collectorName={null} />);
    expect(screen.queryByTestId('send-now')).toBeNull();
  });
});

describe('the result screen: a decline with the donor there', () => {
  it('is marked seen (no "declined after sending" alarm), and "Try another card" keeps the entry but not the card', async () => {
    const item = testItem({
      state: 'declined',
      error: { errorCode: 'CARD_DECLINED', message: 'Insufficient funds' },
      amountMinor: 3600,
    });
    const data = testTerminalData({ settings, items: [item] });
    const draft = {
      ...emptyDraft('USD'),
      amountText: '36',
      campaignNum: 2,
      card: { ccNum: '4000000000000002', expiry: '12/30', cvv: '123', holder: 'M Cohen' },
      donor: { ...emptyDraft('USD').donor, mode: 'new' as const, firstName: 'Moshe', lastName: 'Cohen' },
    };
    useTerminal.setState({ settings, draft, result: item, waiting: false, screen: 'result' });
    mount(data, <ResultScreen />);
    await waitFor(() => expect(data.seen).toEqual([item.id]));
    fireEvent.click(screen.getByTestId('try-another-payment'));
    const after = useTerminal.getState();
    expect(after.screen).toBe('method');
    expect(after.result).toBeNull();
    expect(after.draft).toMatchObject({ amountText: '36', campaignNum: 2, donor: { firstName: 'Moshe' } });
    expect(after.draft.card).toEqual({ ccNum: '', expiry: '', cvv: '', holder: '' });
  });

  it('an approved payment offers no "try another card"', async () => {
    const item = testItem({ state: 'done', receiptNum: 'R1', amountMinor: 1800 });
    const data = testTerminalData({ settings, items: [item] });
    useTerminal.setState({
      settings,
      draft: emptyDraft('USD'),
      result: item,
      waiting: false,
      screen: 'result',
    });
    mount(data, <ResultScreen />);
    await waitFor(() => expect(data.seen).toEqual([item.id]));
    expect(screen.queryByTestId('try-another-payment')).toBeNull();
  });
});

describe('the result screen: first answer PAYMENT_PENDING', () => {
  function showResult() {
    const item = confirmingItem();
    const data = testTerminalData({ settings, items: [item] });
    useTerminal.setState({
      settings,
      draft: emptyDraft('USD'),
      result: item,
      waiting: false,
      screen: 'result',
    });
    mount(data, <ResultScreen onDone={() => {}} />);
    return { item, data };
  }

  it('English: "being confirmed — do not charge again", then the receipt here once confirmed', async () => {
    const { item, data } = showResult();
    expect(screen.getByTestId('result-confirming').textContent).toBe(
      'Being confirmed with the card processor — do not charge again; it will show here when confirmed',
    );
    expect(screen.getByTestId('result-ref').textContent).toContain(item.localRef);
    expect(screen.queryByTestId('print-receipt')).toBeNull();
    expect(screen.queryByTestId('result-error')).toBeNull();
    // The server has found out: Success with a receipt.
    act(() => data.settle(item.id, { state: 'done', receiptNum: 'R2001', error: null }));
    await screen.findByTestId('result-approved');
    expect(screen.getByTestId('result-approved').textContent).toContain('R2001');
    expect(screen.getByTestId('print-receipt')).toBeTruthy();
  });

  it('Hebrew, and a later decline shows as declined', async () => {
    await applyLanguage('he');
    const { item, data } = showResult();
    expect(screen.getByTestId('result-confirming').textContent).toBe(
      'בבירור מול חברת הסליקה — אין לחייב שוב; התוצאה תוצג כאן כשתתקבל',
    );
    act(() =>
      data.settle(item.id, {
        state: 'declined',
        error: { errorCode: 'CARD_DECLINED', message: 'Insufficient funds' },
      }),
    );
    await screen.findByTestId('result-declined');
    expect(screen.getByTestId('result-declined').textContent).toContain('Insufficient funds');
  });
});
