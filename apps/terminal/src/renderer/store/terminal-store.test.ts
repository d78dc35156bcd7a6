import type { LocalSettings } from '@kupah/terminal-core';
import { testSettings } from '@kupah/terminal-core/testing';
import { beforeEach, describe, expect, it } from 'vitest';
import { emptyDraft, nextScreen, previousScreen, useTerminal } from './terminal-store.ts';

const DEFAULT_LOCAL: LocalSettings = {
  deviceName: null,
  location: { locationName: null, latitude: null, longitude: null },
  language: 'en',
  mode: 'cashier',
  collectorAccountNum: null,
  managerPinHash: null,
  kioskIdleSeconds: 60,
};

const settings = testSettings({ currencies: ['ILS', 'USD'], timezone: 'Asia/Jerusalem', il: true });

describe('terminal store', () => {
  beforeEach(() =>
    useTerminal.setState({
      draft: emptyDraft(),
      settings: null,
      local: null,
      screen: 'pairing',
      result: null,
    }),
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

describe('the flow of a donation in each mode', () => {
  beforeEach(() =>
    useTerminal.setState({
      draft: emptyDraft(),
      settings: null,
      local: null,
      screen: 'amount',
      result: null,
    }),
  );

  it('the cashier and the collector go through every step; the kiosk skips campaign and schedule', () => {
    expect(nextScreen('amount', 'cashier')).toBe('method');
    expect(nextScreen('donor', 'cashier')).toBe('details');
    expect(nextScreen('details', 'collector')).toBe('review');
    expect(nextScreen('donor', 'kiosk')).toBe('review');
    // Confirming on the review screen is not a "next": only enqueue leads to the result.
    expect(nextScreen('review', 'cashier')).toBeNull();
    expect(previousScreen('review', 'kiosk')).toBe('donor');
    expect(previousScreen('review', 'cashier')).toBe('details');
    expect(previousScreen('amount', 'cashier')).toBeNull();
    expect(previousScreen('result', 'cashier')).toBeNull();
    // The kiosk starts at its welcome screen: Back from the amount, and from the staff screens, leads there.
    expect(nextScreen('welcome', 'kiosk')).toBe('amount');
    expect(previousScreen('amount', 'kiosk')).toBe('welcome');
    expect(previousScreen('queue', 'kiosk')).toBe('welcome');
    expect(previousScreen('settings', 'cashier')).toBe('amount');
  });

  it('next and back follow the mode in the local settings', () => {
    const s = useTerminal.getState();
    s.setLocal({ ...DEFAULT_LOCAL, mode: 'kiosk' });
    s.go('donor');
    s.next();
    expect(useTerminal.getState().screen).toBe('review');
    s.back();
    s.back();
    expect(useTerminal.getState().screen).toBe('method');
    s.setLocal({ ...DEFAULT_LOCAL, mode: 'cashier' });
    s.go('donor');
    s.next();
    expect(useTerminal.getState().screen).toBe('details');
  });

  it('keeps the draft’s currency one the organisation accepts', () => {
    const s = useTerminal.getState();
    s.patchDraft({ currency: 'EUR' });
    s.setSettings(settings);
    expect(useTerminal.getState().draft.currency).toBe('ILS');
    s.patchDraft({ currency: 'USD' });
    s.setSettings(settings);
    expect(useTerminal.getState().draft.currency).toBe('USD');
  });

  it('edits the schedule in place and marks the result as awaited', () => {
    const s = useTerminal.getState();
    s.patchSchedule({ frequency: 'Special_Days', specialPresets: ['purim'] });
    expect(useTerminal.getState().draft.schedule).toMatchObject({
      frequency: 'Special_Days',
      specialPresets: ['purim'],
      // Nothing assumed: the number of payments is the cashier's to type.
      countText: '',
      by: 'count',
    });
    s.setResult(null, true);
    expect(useTerminal.getState().waiting).toBe(true);
    s.startOver();
    expect(useTerminal.getState().waiting).toBe(false);
  });

  it('the keypad’s 00 key and a typed zero amount', () => {
    const { typeAmount } = useTerminal.getState();
    for (const k of ['5', '00']) typeAmount(k);
    expect(useTerminal.getState().draft.amountText).toBe('500');
    typeAmount('clear');
    typeAmount('00');
    expect(useTerminal.getState().draft.amountText).toBe('0');
  });
});
