import { beforeEach, describe, expect, it } from 'vitest';
import { testSettings } from '../sync/fake-settings.ts';
import { emptyDraft, useTerminal } from './terminal-store.ts';

const settings = testSettings({ currencies: ['ILS', 'USD'], timezone: 'Asia/Jerusalem', il: true });

describe('terminal store', () => {
  beforeEach(() =>
    useTerminal.setState({ draft: emptyDraft(), settings: null, screen: 'pairing', result: null }),
  );

  it('types an amount like a till: digits, one decimal point, at most two decimals, no leading zeros', () => {
    const { typeAmount } = useTerminal.getState();
    for (const k of ['0', '1', '8', '.', '5', '0', '7']) typeAmount(k);
    expect(useTerminal.getState().draft.amountText).toBe('18.50');
    typeAmount('.');
    expect(useTerminal.getState().draft.amountText).toBe('18.50');
    typeAmount('back');
    typeAmount('back');
    typeAmount('back');
    expect(useTerminal.getState().draft.amountText).toBe('18');
    for (const k of ['0', '0', '0', '0', '0', '0']) typeAmount(k);
    expect(useTerminal.getState().draft.amountText).toBe('1800000');
    typeAmount('clear');
    typeAmount('.');
    expect(useTerminal.getState().draft.amountText).toBe('0.');
  });

  it('a preset sets the amount in major units', () => {
    useTerminal.getState().setAmountMinor(3650);
    expect(useTerminal.getState().draft.amountText).toBe('36.50');
    useTerminal.getState().setAmountMinor(18_000);
    expect(useTerminal.getState().draft.amountText).toBe('180');
  });

  it('starting over clears the donation and uses the organisation’s first currency', () => {
    const s = useTerminal.getState();
    s.setSettings(settings);
    s.patchDraft({ amountText: '54', recurring: true });
    s.patchDonor({ mode: 'anonymous' });
    s.startOver();
    const after = useTerminal.getState();
    expect(after.draft).toEqual(emptyDraft('ILS', ''));
    expect(after.screen).toBe('amount');
  });
});
