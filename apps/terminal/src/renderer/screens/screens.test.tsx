// @vitest-environment happy-dom

import { testSettings } from '@kupah/terminal-core/testing';
import { act, cleanup, fireEvent, render, renderHook, screen, within } from '@testing-library/react';
import type { ReactNode } from 'react';
import { I18nextProvider } from 'react-i18next';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { testBridge, testTerminalData } from '../../../test/test-terminal-data.ts';
import { useKioskIdle } from '../app.tsx';
import { ServicesContext } from '../app-context.ts';
import { useScreenKeys } from '../components/screen-keys.ts';
import { buildEntry } from '../forms/build-entry.ts';
import { applyLanguage, i18n } from '../i18n/index.ts';
import { emptyDraft, useTerminal } from '../store/terminal-store.ts';
import { AmountScreen } from './amount-screen.tsx';
import { DetailsScreen } from './details-screen.tsx';
import { MethodScreen } from './method-screen.tsx';

const settings = testSettings({ coverFeePercent: 0 });
const data = testTerminalData({ settings });
const bridge = testBridge();

/** The screen with the app's keyboard handling (Enter presses the primary button, Escape goes back). */
function WithKeys({ children }: { children: ReactNode }) {
  useScreenKeys(useTerminal.getState().back);
  return <>{children}</>;
}

function mount(node: ReactNode) {
  return render(
    <I18nextProvider i18n={i18n}>
      <ServicesContext.Provider value={{ data, bridge }}>
        <WithKeys>{node}</WithKeys>
      </ServicesContext.Provider>
    </I18nextProvider>,
  );
}

const type = (testId: string, value: string) =>
  fireEvent.change(screen.getByTestId(testId), { target: { value } });
const errorOf = (testId: string) => screen.queryByTestId(`${testId}-error`)?.textContent ?? null;
const button = (testId: string) => screen.getByTestId(testId) as HTMLButtonElement;

beforeEach(() =>
  useTerminal.setState({ settings, local: null, draft: emptyDraft('USD'), screen: 'amount', result: null }),
);
afterEach(async () => {
  cleanup();
  await applyLanguage('en');
});

describe('the amount screen', () => {
  it('Hebrew turns the whole page right to left and every label Hebrew', async () => {
    await applyLanguage('he');
    mount(<AmountScreen kiosk={false} />);
    expect(document.documentElement.dir).toBe('rtl');
    expect(document.documentElement.lang).toBe('he');
    expect(screen.getByRole('heading').textContent).toBe('סכום');
    expect(screen.getByRole('button', { name: 'הבא' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'ניקוי' })).toBeTruthy();
    expect(screen.getByText('הוראת קבע')).toBeTruthy();
  });

  it('the keypad types like a till: digits, 00, backspace, clear; Next only above 0', () => {
    mount(<AmountScreen kiosk={false} />);
    expect(button('amount-next').disabled).toBe(true);
    for (const k of ['1', '8', '00']) fireEvent.click(screen.getByTestId(`key-${k}`));
    expect(screen.getByTestId('amount-display').textContent).toBe('$1,800.00');
    fireEvent.click(screen.getByTestId('key-back'));
    fireEvent.click(screen.getByTestId('key-back'));
    expect(screen.getByTestId('amount-display').textContent).toBe('$18.00');
    expect(button('amount-next').disabled).toBe(false);
    fireEvent.click(screen.getByTestId('key-clear'));
    expect(screen.getByTestId('amount-display').textContent).toBe('$0.00');
    expect(button('amount-next').disabled).toBe(true);
  });

  it('takes digits from the physical keyboard, and Enter goes on', () => {
    mount(<AmountScreen kiosk={false} />);
    fireEvent.keyDown(window, { key: '3' });
    fireEvent.keyDown(window, { key: '6' });
    fireEvent.keyDown(window, { key: '.' });
    fireEvent.keyDown(window, { key: '5' });
    expect(useTerminal.getState().draft.amountText).toBe('36.5');
    expect(screen.getByTestId('amount-display').textContent).toContain('36.50');
    fireEvent.keyDown(window, { key: 'Backspace' });
    fireEvent.keyDown(window, { key: 'Enter' });
    expect(useTerminal.getState().screen).toBe('method');
  });

  it('Enter on a keypad key goes on instead of typing the key again', () => {
    mount(<AmountScreen kiosk={false} />);
    const key = screen.getByTestId('key-5');
    fireEvent.click(key);
    key.focus();
    fireEvent.keyDown(key, { key: 'Enter' });
    expect(useTerminal.getState().draft.amountText).toBe('5');
    expect(useTerminal.getState().screen).toBe('method');
  });

  it('presets set the amount; the fee the donor covers is shown and added', () => {
    useTerminal.setState({ settings: testSettings({ coverFeePercent: 3, presetsMinor: [1800, 3600] }) });
    mount(<AmountScreen kiosk={false} />);
    fireEvent.click(screen.getByTestId('preset-3600'));
    expect(screen.getByTestId('preset-3600').getAttribute('aria-pressed')).toBe('true');
    expect(screen.getByTestId('amount-display').textContent).toBe('$36.00');
    const fee = screen.getByTestId('cover-fee');
    expect(fee.closest('label')?.textContent).toContain('+$1.08');
    fireEvent.click(fee);
    expect(screen.getByTestId('amount-total').textContent).toBe('Total $37.08');
  });

  it('the kiosk shows big preset buttons only: no keypad, no schedule', () => {
    mount(<AmountScreen kiosk />);
    expect(screen.getByTestId('preset-1800').className).toContain('big');
    expect(screen.queryByTestId('key-1')).toBeNull();
    expect(screen.queryByTestId('recurring')).toBeNull();
    expect(screen.getByRole('heading').textContent).toBe('Give a donation');
  });

  it('offline, an amount over the per-payment limit cannot go on', () => {
    useTerminal.setState({ status: { ...useTerminal.getState().status, online: false } });
    mount(<AmountScreen kiosk={false} />);
    for (const k of ['6', '0', '0']) fireEvent.click(screen.getByTestId(`key-${k}`));
    expect(screen.getByTestId('amount-error').textContent).toContain('$500.00');
    expect(button('amount-next').disabled).toBe(true);
    useTerminal.setState({ status: { ...useTerminal.getState().status, online: true } });
  });
});

describe('card entry', () => {
  beforeEach(() =>
    useTerminal.setState({ draft: { ...emptyDraft('USD'), amountText: '18' }, screen: 'method' }),
  );

  it('names the brand and says what is wrong as the card is typed; Next waits until all is valid', () => {
    mount(<MethodScreen />);
    expect(button('method-next').disabled).toBe(true);
    type('card-number', '4242 4242');
    expect(screen.getByTestId('card-brand').textContent).toBe('Card type: Visa');
    expect(errorOf('card-number')).toBeNull(); // not yet: still typing
    type('card-number', '4242 4242 4242 4241');
    expect(errorOf('card-number')).toBe('This card number is not valid (check digit)');
    expect(screen.getByTestId('card-number').getAttribute('aria-invalid')).toBe('true');
    type('card-number', '4242 4242 4242 4242');
    expect(errorOf('card-number')).toBeNull();

    type('card-expiry', '0120');
    expect((screen.getByTestId('card-expiry') as HTMLInputElement).value).toBe('01/20');
    expect(errorOf('card-expiry')).toBe('This card has expired');
    type('card-expiry', '12/30');
    expect(errorOf('card-expiry')).toBeNull();

    type('card-cvv', '12');
    fireEvent.blur(screen.getByTestId('card-cvv'));
    expect(errorOf('card-cvv')).toBe('The CVV has 3 digits');
    expect(button('method-next').disabled).toBe(true);
    type('card-cvv', '123');
    expect(errorOf('card-cvv')).toBeNull();
    expect(button('method-next').disabled).toBe(false);

    // American Express: four CVV digits.
    type('card-number', '3782 822463 10005');
    expect(screen.getByTestId('card-brand').textContent).toBe('Card type: American Express');
    expect(errorOf('card-cvv')).toBe('The CVV has 4 digits');
    expect(button('method-next').disabled).toBe(true);
  });

  it('messages are in Hebrew in Hebrew', async () => {
    await applyLanguage('he');
    mount(<MethodScreen />);
    type('card-number', '4242424242424241');
    expect(errorOf('card-number')).toBe('מספר הכרטיס אינו תקין (ספרת ביקורת)');
  });

  it('charity cards are named as the organisation names its providers', () => {
    useTerminal.setState({
      settings: { ...useTerminal.getState().settings!, providerNames: { Provider_1: "Donors' Fund" } },
    });
    try {
      mount(<MethodScreen />);
      expect(screen.getByTestId('method-Provider_1').closest('label')!.textContent).toBe("Donors' Fund");
      expect(screen.getByTestId('method-Provider_2').closest('label')!.textContent).toBe('Charity card 2');
    } finally {
      useTerminal.setState({ settings: { ...useTerminal.getState().settings!, providerNames: {} } });
    }
  });

  it('ACH checks the routing number (ABA checksum); charity cards take a number or a token', () => {
    mount(<MethodScreen />);
    fireEvent.click(screen.getByTestId('method-ACH'));
    type('ach-routing', '021000022');
    expect(errorOf('ach-routing')).toBe('This routing number is not valid (checksum)');
    type('ach-routing', '021000021');
    type('ach-account', '123456789');
    // The account number typed again, and the donor's debit authorisation, before Next.
    expect(button('method-next').disabled).toBe(true);
    type('ach-account-confirm', '123456780');
    expect(errorOf('ach-account-confirm')).toBe('The two account numbers differ');
    type('ach-account-confirm', '123456789');
    expect(button('method-next').disabled).toBe(true);
    expect(screen.getByTestId('ach-authorisation-text').textContent).toContain('I authorise');
    fireEvent.click(screen.getByTestId('ach-authorise'));
    expect(button('method-next').disabled).toBe(false);
    fireEvent.click(screen.getByTestId('method-Provider_3'));
    type('charity-number', '12');
    fireEvent.blur(screen.getByTestId('charity-number'));
    expect(errorOf('charity-number')).toContain('8 to 19 digits');
    type('charity-number', 'tok_live12345678');
    expect(button('method-next').disabled).toBe(false);
  });
});

describe('campaign, reasons and the schedule', () => {
  it('a recurring donation: its terms come first and the number of payments must be typed (nothing assumed)', async () => {
    useTerminal.setState({
      draft: { ...emptyDraft('USD'), amountText: '18', recurring: true },
      screen: 'details',
    });
    mount(<DetailsScreen />);
    const schedule = await screen.findByTestId('schedule');
    const campaign = screen.getByTestId('campaign');
    // The schedule's terms are above the campaign in the page.
    expect(schedule.compareDocumentPosition(campaign) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect((screen.getByTestId('schedule-count') as HTMLInputElement).value).toBe('');
    expect(button('details-next').disabled).toBe(true);
    type('schedule-count', '12');
    expect(button('details-next').disabled).toBe(false);
  });

  it('a split across reasons must add up to the amount before Next is allowed', async () => {
    useTerminal.setState({ draft: { ...emptyDraft('USD'), amountText: '100' }, screen: 'details' });
    mount(<DetailsScreen />);
    await screen.findByText('Kiddush');
    fireEvent.click(screen.getByTestId('split'));
    expect(screen.getByTestId('split-remaining').textContent).toContain('$0.00');
    // The first part starts with the whole amount but no reason: not yet.
    expect(button('details-next').disabled).toBe(true);
    fireEvent.change(screen.getByTestId('part-reason-0'), { target: { value: '1' } });
    expect(button('details-next').disabled).toBe(false);
    type('part-amount-0', '60');
    expect(screen.getByTestId('split-remaining').textContent).toContain('Left to assign: $40.00');
    expect(screen.getByTestId('split-remaining').textContent).toContain('must add up');
    expect(button('details-next').disabled).toBe(true);
    fireEvent.click(screen.getByTestId('part-add'));
    expect((screen.getByTestId('part-amount-1') as HTMLInputElement).value).toBe('40.00');
    fireEvent.change(screen.getByTestId('part-reason-1'), { target: { value: '2' } });
    expect(button('details-next').disabled).toBe(false);
    type('part-amount-1', '39.99');
    expect(button('details-next').disabled).toBe(true);
    type('part-amount-1', '40');
    expect(button('details-next').disabled).toBe(false);
    expect(useTerminal.getState().draft.parts).toEqual([
      { reasonNum: 1, amountText: '60' },
      { reasonNum: 2, amountText: '40' },
    ]);
  });

  it('offers all 14 frequencies, with labels in the current language', async () => {
    useTerminal.setState({ draft: { ...emptyDraft('USD'), amountText: '18', recurring: true } });
    await applyLanguage('he');
    mount(<DetailsScreen />);
    const options = within(screen.getByTestId('frequency')).getAllByRole('option');
    expect(options).toHaveLength(14);
    expect(options.map((o) => o.textContent)).toContain('חודשי (לפי הלוח העברי)');
    expect(options.map((o) => o.textContent)).toContain('ימי יזכור');
  });

  it('previews a Monthly_Hebrew schedule with Hebrew dates (ט״ו בשבט style in Hebrew)', async () => {
    const draft = { ...emptyDraft('USD'), amountText: '18', recurring: true };
    draft.schedule = {
      ...draft.schedule,
      frequency: 'Monthly_Hebrew',
      countText: '12',
      startDate: '2099-01-01',
    };
    useTerminal.setState({ draft });
    await applyLanguage('he');
    mount(<DetailsScreen />);
    const dates = screen.getAllByTestId('hebrew-date').map((c) => c.textContent ?? '');
    expect(dates).toHaveLength(12);
    // Day in letters, ב + month, year in letters, no vowel points: e.g. "כ״ג בטבת תתנ״ט".
    for (const d of dates) expect(d).toMatch(/^[א-ת״׳]+ ב[א-ת]+( [א-ת]׳)? [א-ת״׳]+$/);
    expect(new Set(dates.map((d) => d.split(' ')[1])).size).toBeGreaterThanOrEqual(11);
    expect(screen.getByTestId('schedule-summary').textContent).toContain('12');
    await act(async () => applyLanguage('en'));
    const english = screen.getAllByTestId('hebrew-date').map((c) => c.textContent ?? '');
    expect(english[0]).toMatch(/^\d+ \S.* 5859$/);
  });

  it('today in the device’s zone is the default start; a past date is refused', async () => {
    const draft = { ...emptyDraft('USD'), amountText: '18', recurring: true };
    useTerminal.setState({ draft });
    mount(<DetailsScreen />);
    const start = screen.getByTestId('schedule-start');
    const today = start.getAttribute('data-value') ?? '';
    expect(today).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // Day, month and year in the interface's language: English month names, month first.
    const selects = [...start.querySelectorAll('select')].map((x) => x.getAttribute('data-testid'));
    expect(selects).toEqual(['schedule-start-month', 'schedule-start-day', 'schedule-start-year']);
    expect(screen.getByTestId('schedule-start-month').textContent).toContain('January');
    // A year back: in the past, refused.
    fireEvent.change(screen.getByTestId('schedule-start-year'), {
      target: { value: String(Number(today.slice(0, 4)) - 1) },
    });
    expect(screen.getByTestId('schedule-start-error').textContent).toContain('past');
    expect(button('details-next').disabled).toBe(true);
  });

  it('in Hebrew the start date is day, month (in Hebrew), year — not the browser’s MM/DD/YYYY', async () => {
    await applyLanguage('he');
    try {
      const draft = { ...emptyDraft('USD'), amountText: '18', recurring: true };
      useTerminal.setState({ draft });
      mount(<DetailsScreen />);
      const start = await screen.findByTestId('schedule-start');
      const selects = [...start.querySelectorAll('select')].map((x) => x.getAttribute('data-testid'));
      expect(selects).toEqual(['schedule-start-day', 'schedule-start-month', 'schedule-start-year']);
      expect(screen.getByTestId('schedule-start-month').textContent).toContain('נובמבר');
      fireEvent.change(screen.getByTestId('schedule-start-month'), { target: { value: '2' } });
      fireEvent.change(screen.getByTestId('schedule-start-day'), { target: { value: '28' } });
      expect(useTerminal.getState().draft.schedule.startDate).toMatch(/^\d{4}-02-28$/);
    } finally {
      await applyLanguage('en');
    }
  });

  it('a schedule by total: the remainder goes to the first payment, shown in the preview', async () => {
    const draft = { ...emptyDraft('USD'), amountText: '18', recurring: true };
    draft.schedule = {
      ...draft.schedule,
      frequency: 'Monthly',
      by: 'total',
      totalText: '100',
      startDate: '2099-01-01',
    };
    useTerminal.setState({ draft });
    mount(<DetailsScreen />);
    expect(screen.getByTestId('schedule-summary').textContent).toBe(
      '6 payments: first $10.00, then $18.00 each = $100.00',
    );
    const rows = within(screen.getByTestId('schedule-preview')).getAllByRole('row');
    expect(rows).toHaveLength(7); // header + 6
    expect(rows[1]?.textContent).toContain('$10.00');
  });

  it('Special_Days asks which days', async () => {
    const draft = { ...emptyDraft('USD'), amountText: '5', recurring: true };
    draft.schedule = {
      ...draft.schedule,
      frequency: 'Special_Days',
      countText: '4',
      startDate: '2099-01-01',
    };
    useTerminal.setState({ draft });
    mount(<DetailsScreen />);
    expect(screen.getByTestId('special-days-error').textContent).toBe('Choose at least one kind of day');
    expect(button('details-next').disabled).toBe(true);
    fireEvent.click(screen.getByTestId('special-rosh_chodesh'));
    expect(screen.queryByTestId('special-days-error')).toBeNull();
    expect(screen.getAllByTestId('hebrew-date')).toHaveLength(4);
  });

  it('Special_Days takes dates of the donor’s own, alone or with kinds of day, and sends them', async () => {
    const draft = { ...emptyDraft('USD'), amountText: '5', recurring: true };
    const y = String(new Date().getFullYear() + 1);
    draft.schedule = {
      ...draft.schedule,
      frequency: 'Special_Days',
      countText: '2',
      startDate: `${y}-01-01`,
    };
    useTerminal.setState({ draft });
    mount(<DetailsScreen />);
    expect(button('details-next').disabled).toBe(true);
    const pick = (y: string, m: string, d: string) => {
      fireEvent.change(screen.getByTestId('special-date-year'), { target: { value: y } });
      fireEvent.change(screen.getByTestId('special-date-month'), { target: { value: m } });
      fireEvent.change(screen.getByTestId('special-date-day'), { target: { value: d } });
      fireEvent.click(screen.getByTestId('special-date-add'));
    };
    pick(y, '3', '10');
    pick(y, '2', '1');
    expect(useTerminal.getState().draft.schedule.specialDates).toEqual([`${y}-02-01`, `${y}-03-10`]);
    expect(screen.queryByTestId('special-days-error')).toBeNull();
    expect(button('details-next').disabled).toBe(false);
    expect(screen.getAllByTestId('hebrew-date')).toHaveLength(2);
    const entry = buildEntry(useTerminal.getState().draft, settings, null, null);
    expect(entry.request).toMatchObject({
      scheduleDetails: { specialDays: { presets: [], dates: [`${y}-02-01`, `${y}-03-10`] } },
    });
    fireEvent.click(screen.getByTestId(`special-date-remove-${y}-02-01`));
    expect(useTerminal.getState().draft.schedule.specialDates).toEqual([`${y}-03-10`]);
  });
});

describe('kiosk idle', () => {
  it('after the idle time the entry is cleared, with a countdown in the last 10 seconds', () => {
    vi.useFakeTimers();
    try {
      const onIdle = vi.fn();
      const { result } = renderHook(() => useKioskIdle(true, 15, onIdle));
      act(() => void vi.advanceTimersByTime(4_000));
      expect(result.current).toBeNull();
      act(() => void vi.advanceTimersByTime(2_000));
      expect(result.current).toBe(9);
      fireEvent.pointerDown(window);
      act(() => void vi.advanceTimersByTime(14_000));
      expect(onIdle).not.toHaveBeenCalled();
      act(() => void vi.advanceTimersByTime(2_000));
      expect(onIdle).toHaveBeenCalledTimes(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
