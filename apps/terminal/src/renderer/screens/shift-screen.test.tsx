// @vitest-environment happy-dom

import { testSettings } from '@kupah/terminal-core/testing';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { I18nextProvider } from 'react-i18next';
import { afterEach, describe, expect, it } from 'vitest';
import { type TestTerminalData, testBridge, testTerminalData } from '../../../test/test-terminal-data.ts';
import { ServicesContext } from '../app-context.ts';
import { applyLanguage, i18n } from '../i18n/index.ts';
import { useTerminal } from '../store/terminal-store.ts';
import { ShiftScreen } from './shift-screen.tsx';

const settings = testSettings({ coverFeePercent: 0 });
const TOTALS = {
  succeeded: [
    { method: 'Credit_Card', currency: 'USD' as const, count: 3, amountMinor: 5400 },
    { method: 'ACH', currency: 'USD' as const, count: 1, amountMinor: 10_000 },
  ],
  voided: [{ method: 'Credit_Card', currency: 'USD' as const, count: 1, amountMinor: 1800 }],
  declined: [],
  queued: [{ method: 'Credit_Card', currency: 'ILS' as const, count: 2, amountMinor: 7200 }],
};

function mount(data: TestTerminalData, node: ReactNode, bridge = testBridge()) {
  render(
    <I18nextProvider i18n={i18n}>
      <ServicesContext.Provider value={{ data, bridge }}>{node}</ServicesContext.Provider>
    </I18nextProvider>,
  );
  return bridge;
}

function withTotals() {
  const data = testTerminalData({ settings });
  data.shiftSummary = async () => ({
    openedAt: '2026-11-25T07:00:00.000Z',
    at: '2026-11-25T15:00:00.000Z',
    totals: TOTALS,
  });
  return data;
}

afterEach(async () => {
  cleanup();
  await applyLanguage('en');
});

describe('close shift', () => {
  it('shows the totals by method and currency, prints them, closes the shift and says the server has not recorded it yet', async () => {
    useTerminal.setState({
      settings,
      screen: 'shift',
      local: { ...testTerminalData({ settings }).local(), managerPinHash: null },
    });
    const data = withTotals();
    const bridge = mount(data, <ShiftScreen />);
    await screen.findByTestId('shift-screen');
    expect(screen.getByTestId('shift-device-succeeded').textContent).toContain('3 donations');
    expect(screen.getByTestId('shift-device-succeeded').textContent).toContain('$54.00');
    expect(screen.getByTestId('shift-device-succeeded').textContent).toContain('$100.00');
    expect(screen.getByTestId('shift-device-voided').textContent).toContain('$18.00');
    expect(screen.getByTestId('shift-device-declined').textContent).toContain('none');
    expect(screen.getByTestId('shift-device-queued').textContent).toContain('₪72.00');
    fireEvent.click(screen.getByTestId('shift-print'));
    await waitFor(() => expect(bridge.printed).toHaveLength(1));
    const printed = bridge.printed[0] as { title: string; lines: string[] };
    expect(printed.title).toBe('Close shift');
    expect(printed.lines.join('\n')).toMatch(/Received:\n {2}Credit card · 3 donations · \$54\.00/);
    fireEvent.change(screen.getByTestId('shift-closed-by'), { target: { value: 'Rivka' } });
    fireEvent.click(screen.getByTestId('shift-close'));
    await screen.findByText('Shift closed');
    expect(await data.listShiftCloses()).toHaveLength(1);
    expect((await data.listShiftCloses())[0]!.closedBy).toBe('Rivka');
    expect(screen.getByTestId('shift-not-reported')).toBeTruthy();
    expect(screen.queryByTestId('shift-close')).toBeNull();
  });

  it('asks for the manager PIN when one is set', async () => {
    const data = withTotals();
    useTerminal.setState({
      settings,
      screen: 'shift',
      local: { ...data.local(), managerPinHash: 'pbkdf2-sha256$x' },
    });
    mount(data, <ShiftScreen />);
    await screen.findByTestId('shift-locked');
    expect(screen.queryByTestId('shift-screen')).toBeNull();
  });

  it('in Hebrew', async () => {
    await applyLanguage('he');
    useTerminal.setState({
      settings,
      screen: 'shift',
      local: { ...testTerminalData({ settings }).local(), managerPinHash: null },
    });
    mount(withTotals(), <ShiftScreen />);
    await screen.findByTestId('shift-screen');
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('סגירת משמרת');
    expect(screen.getByTestId('shift-device-succeeded').textContent).toContain('התקבלו');
  });
});
