// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, renderHook, screen } from '@testing-library/react';
import { I18nextProvider } from 'react-i18next';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useKioskIdle } from '../app.tsx';
import { ServicesContext } from '../app-context.ts';
import type { TerminalData } from '../data/terminal-data.ts';
import { applyLanguage, i18n } from '../i18n/index.ts';
import { emptyDraft, useTerminal } from '../store/terminal-store.ts';
import { testSettings } from '../sync/fake-settings.ts';
import { AmountScreen } from './amount-screen.tsx';
import { DetailsScreen } from './details-screen.tsx';

const settings = testSettings({ coverFeePercent: 0 });

/** Only what these screens read: the reference lists. */
const data = {
  campaigns: async () => [{ campaignNum: 1, name: 'Building Fund', friendlyName: null }],
  reasons: async () => [{ reasonNum: 1, name: 'Kiddush', nameHebrew: 'קידוש', campaignNum: null }],
} as unknown as TerminalData;
const bridge = { timeZone: () => 'America/New_York' } as never;

function mount(node: React.ReactNode) {
  return render(
    <I18nextProvider i18n={i18n}>
      <ServicesContext.Provider value={{ data, bridge }}>{node}</ServicesContext.Provider>
    </I18nextProvider>,
  );
}

afterEach(async () => {
  cleanup();
  await applyLanguage('en');
});

describe('screens', () => {
  it('Hebrew turns the whole page right to left and every label Hebrew', async () => {
    useTerminal.setState({ settings, draft: emptyDraft('USD') });
    await applyLanguage('he');
    mount(<AmountScreen kiosk={false} />);
    expect(document.documentElement.dir).toBe('rtl');
    expect(document.documentElement.lang).toBe('he');
    expect(screen.getByRole('heading').textContent).toBe('סכום');
    expect(screen.getByRole('button', { name: 'הבא' })).toBeTruthy();
  });

  it('the amount screen takes keys from the physical keyboard and refuses to go on at 0', async () => {
    useTerminal.setState({ settings, draft: emptyDraft('USD'), screen: 'amount' });
    mount(<AmountScreen kiosk={false} />);
    const next = screen.getByTestId('amount-next') as HTMLButtonElement;
    expect(next.disabled).toBe(true);
    fireEvent.keyDown(window, { key: '3' });
    fireEvent.keyDown(window, { key: '6' });
    expect(useTerminal.getState().draft.amountText).toBe('36');
    expect(screen.getByTestId('amount-display').textContent).toContain('36.00');
    fireEvent.keyDown(window, { key: 'Enter' });
    expect(useTerminal.getState().screen).toBe('method');
  });

  it('previews a Monthly_Hebrew schedule with Hebrew dates (in Hebrew letters in Hebrew)', async () => {
    const draft = { ...emptyDraft('USD'), amountText: '18', recurring: true };
    draft.schedule = { frequency: 'Monthly_Hebrew' as const, countText: '12', startDate: '2099-01-01' };
    useTerminal.setState({ settings, draft });
    await applyLanguage('he');
    mount(<DetailsScreen />);
    const dates = screen.getAllByTestId('hebrew-date').map((c) => c.textContent ?? '');
    expect(dates).toHaveLength(12);
    expect(dates.every((d) => /[א-ת]/.test(d))).toBe(true);
    await act(async () => applyLanguage('en'));
    const english = screen.getAllByTestId('hebrew-date').map((c) => c.textContent ?? '');
    expect(english[0]).toMatch(/^\d+ \S.* 5859$/);
  });

  it('kiosk: after the idle time the entry is cleared, with a warning in the last seconds', () => {
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
