// @vitest-environment happy-dom
/** The whole app with an in-memory data layer: flows across screens, the swipe, the kiosk, the queue. */

import { derivePinRecord, PairingError, sha256Hex, verifyPinRecord } from '@kupah/terminal-core';
import { testSettings } from '@kupah/terminal-core/testing';
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { I18nextProvider } from 'react-i18next';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type TestDataOptions,
  testBridge,
  testItem,
  testTerminalData,
} from '../../../test/test-terminal-data.ts';
import { App } from '../app.tsx';
import { ServicesContext } from '../app-context.ts';
import { clearSwipe } from '../forms/swipe-capture.ts';
import { applyLanguage, i18n } from '../i18n/index.ts';
import { emptyDraft, useTerminal } from '../store/terminal-store.ts';
import { pairingCodeFromAddress } from './pairing-screen.tsx';

const settings = testSettings({ coverFeePercent: 0, presetsMinor: [1800, 3600] });

async function start(opts: Partial<TestDataOptions> = {}) {
  useTerminal.setState({ screen: 'pairing', draft: emptyDraft(), settings: null, local: null, result: null });
  const data = testTerminalData({ settings, ...opts });
  const bridge = testBridge();
  render(
    <I18nextProvider i18n={i18n}>
      <ServicesContext.Provider value={{ data, bridge }}>
        <App />
      </ServicesContext.Provider>
    </I18nextProvider>,
  );
  const first = opts.local?.mode === 'kiosk' ? 'welcome-screen' : 'amount-screen';
  await screen.findByTestId(opts.paired === false ? 'pairing-screen' : first);
  return { data, bridge };
}

const click = (testId: string) => fireEvent.click(screen.getByTestId(testId));
const type = (testId: string, value: string) =>
  fireEvent.change(screen.getByTestId(testId), { target: { value } });

/** A keyboard-wedge reader: every character of the tracks, then Enter, to whatever has focus. */
function swipe(tracks: string) {
  const target = document.activeElement ?? document.body;
  for (const key of [...tracks, 'Enter']) fireEvent.keyDown(target, { key });
}

const PAN = '4111111111111111';
const TRACKS = `%B${PAN}^DOE/JOHN A^3012101000000000000000?;${PAN}=30121010000000000000?`;

afterEach(async () => {
  cleanup();
  clearSwipe();
  vi.useRealTimers();
  await applyLanguage('en');
});

describe('the terminal', () => {
  it('Enter goes on from a radio button and from a choice button ("Anonymous"), choosing it first', async () => {
    await start();
    click('key-5');
    const oneTime = screen.getByTestId('one-time');
    oneTime.focus();
    fireEvent.keyDown(oneTime, { key: 'Enter' });
    await screen.findByTestId('method-screen');
    type('card-number', '4242424242424242');
    type('card-expiry', '12/30');
    type('card-cvv', '123');
    click('method-next');
    await screen.findByTestId('donor-screen');
    const anonymous = screen.getByTestId('donor-anonymous');
    anonymous.focus();
    fireEvent.keyDown(anonymous, { key: 'Enter' });
    await screen.findByTestId('details-screen');
    expect(useTerminal.getState().draft.donor.mode).toBe('anonymous');
  });

  it('a % or ; typed by hand reaches the field it was typed in (a swipe is a burst; one key is a person)', async () => {
    await start();
    click('key-5');
    click('amount-next');
    await screen.findByTestId('method-screen');
    const holder = screen.getByTestId('card-holder') as HTMLInputElement;
    holder.focus();
    type('card-holder', 'Cohen ');
    fireEvent.keyDown(holder, { key: ';' });
    await waitFor(() => expect(holder.value).toBe('Cohen ;'));
    expect(useTerminal.getState().draft.card.holder).toBe('Cohen ;');
    expect(useTerminal.getState().draft.swiped).toBeNull();
  });

  it('a typed card number is grouped as the card prints it', async () => {
    await start();
    click('key-5');
    click('amount-next');
    await screen.findByTestId('method-screen');
    type('card-number', '4242424242424242');
    expect((screen.getByTestId('card-number') as HTMLInputElement).value).toBe('4242 4242 4242 4242');
    type('card-number', '378282246310005');
    expect((screen.getByTestId('card-number') as HTMLInputElement).value).toBe('3782 822463 10005');
    expect(screen.getByTestId('card-brand').textContent).toContain('American Express');
  });

  it('a swiped card is taken but never shown: brand and last 4 only, on every screen to the result', async () => {
    const { data } = await start();
    click('key-1');
    click('key-8');
    click('amount-next');
    await screen.findByTestId('method-screen');
    // The amount stays in sight on every step after the amount screen.
    expect(screen.getByTestId('draft-amount').textContent).toBe('Donation: $18.00');
    expect(document.activeElement).toBe(screen.getByTestId('card-number'));
    swipe(TRACKS);
    expect(screen.getByTestId('swiped-card').textContent).toBe('Card swiped: Visa •••• 1111');
    expect(document.body.innerHTML).not.toContain(PAN);
    expect(useTerminal.getState().draft.card.ccNum).toBe('');
    expect(JSON.stringify(useTerminal.getState())).not.toContain(PAN);
    expect((screen.getByTestId('card-holder') as HTMLInputElement).value).toBe('JOHN A DOE');
    click('method-next');
    expect(screen.getByTestId('draft-amount').textContent).toBe('Donation: $18.00');
    click('donor-anonymous');
    click('donor-next');
    expect(screen.getByTestId('draft-amount').textContent).toBe('Donation: $18.00');
    click('details-next');
    await screen.findByTestId('review-screen');
    expect(screen.getByTestId('review-method').textContent).toBe('Visa •••• 1111');
    expect(document.body.innerHTML).not.toContain(PAN);
    click('confirm');
    await screen.findByTestId('result-saved');
    expect(document.body.innerHTML).not.toContain(PAN);
    // Only the entry handed to the durable layer (which seals it) carries the number.
    expect(data.enqueued).toHaveLength(1);
    expect(data.enqueued[0]).toMatchObject({
      kind: 'charge',
      swiped: true,
      request: { amount: 18, isAnonymousDonation: true, card: { ccNum: PAN, expiry: '12/30' } },
    });
    expect(JSON.stringify(data.enqueued[0]?.request)).not.toContain('cvv');
  });

  it('a swipe on the amount screen is taken too; an unreadable one says so', async () => {
    await start();
    click('key-5');
    swipe('%B123^X');
    expect(useTerminal.getState().draft.swiped?.errorKey).toBe('method.errors.swipeUnreadable');
    click('amount-next');
    expect(screen.getByTestId('swipe-error').textContent).toBe('The card could not be read: swipe it again');
    expect((screen.getByTestId('method-next') as HTMLButtonElement).disabled).toBe(true);
    swipe(TRACKS);
    expect(screen.getByTestId('swiped-card').textContent).toContain('•••• 1111');
    expect((screen.getByTestId('method-next') as HTMLButtonElement).disabled).toBe(false);
  });

  it('approved: the receipt number, printed right to left in Hebrew; Escape steps back through the flow', async () => {
    const receipts = {
      enabled: true,
      legalName: 'קהילת בית ישראל',
      address: 'רחוב הרצל 1, ירושלים',
      taxId: '580012345',
      statement: { en: 'No goods or services were provided.', he: 'קבלה לצורך זיכוי ממס לפי סעיף 46.' },
    };
    const { data, bridge } = await start({
      outcome: 'done',
      local: { language: 'he' },
      settings: { ...settings, receipts },
    });
    expect(document.documentElement.dir).toBe('rtl');
    expect(screen.getByTestId('nav-donate').textContent).toBe('תרומה');
    click('preset-3600');
    click('amount-next');
    type('card-number', '4242424242424242');
    type('card-expiry', '12/30');
    type('card-cvv', '123');
    click('method-next');
    fireEvent.keyDown(window, { key: 'Escape' });
    expect(useTerminal.getState().screen).toBe('method');
    click('method-next');
    click('donor-new');
    type('donor-first-he', 'שרה');
    expect(screen.getByTestId('donor-name-error').textContent).toBe(
      'הזינו שם פרטי ושם משפחה, בעברית או באנגלית',
    );
    expect((screen.getByTestId('donor-next') as HTMLButtonElement).disabled).toBe(true);
    type('donor-last-he', 'כהן');
    type('donor-email', 'sarah@example.org');
    click('donor-next');
    click('details-next');
    await screen.findByTestId('review-screen');
    click('confirm');
    await screen.findByTestId('result-approved');
    expect(screen.getByTestId('result-approved').textContent).toContain('R1001');
    expect(data.enqueued[0]?.request).toMatchObject({
      amount: 36,
      donor: { firstNameHebrew: 'שרה', lastNameHebrew: 'כהן', email: 'sarah@example.org', firstName: null },
    });
    click('print-receipt');
    await screen.findByTestId('print-note');
    expect(bridge.printed[0]).toMatchObject({ direction: 'rtl' });
    const lines = (bridge.printed[0] as { lines: string[] }).lines.join('\n');
    expect(lines).toContain('קבלה מס׳ R1001');
    expect(lines).not.toContain('4242424242424242');
    // The same content as the e-mailed receipt: the organisation's legal details and tax wording.
    expect(lines).toContain('קהילת בית ישראל');
    expect(lines).toContain('מספר עמותה: 580012345');
    expect(lines).toContain('קבלה לצורך זיכוי ממס לפי סעיף 46.');
    expect(lines).not.toContain('No goods or services');
    // E-mail: the address the donor gave, sent by the server (no mailto: link).
    expect((screen.getByTestId('receipt-email') as HTMLInputElement).value).toBe('sarah@example.org');
    type('receipt-email', 'not-an-address');
    click('email-receipt');
    await waitFor(() => expect(screen.getByTestId('receipt-email-error').textContent).not.toBe(''));
    type('receipt-email', 'sarah@example.org');
    click('email-receipt');
    await waitFor(() =>
      expect(screen.getByTestId('receipt-email-status').textContent).toContain('sarah@example.org'),
    );
    expect(data.receiptRequests).toEqual([
      { id: data.items[0]!.id, email: 'sarah@example.org', language: 'he' },
    ]);
  });

  it('the organisation sends no receipts: no e-mail field, the printed receipt has the plain name', async () => {
    await start({ outcome: 'done', settings: { ...settings, receipts: undefined } });
    click('preset-3600');
    click('amount-next');
    type('card-number', '4242424242424242');
    type('card-expiry', '12/30');
    type('card-cvv', '123');
    click('method-next');
    click('donor-anonymous');
    click('donor-next');
    click('details-next');
    click('confirm');
    await screen.findByTestId('result-approved');
    expect(screen.queryByTestId('receipt-email')).toBeNull();
    expect(screen.getByTestId('receipt-lines').textContent).toContain(settings.orgName);
  });

  it('declined, and refused by the durable layer: each message where it belongs', async () => {
    const { data } = await start({ outcome: 'declined' });
    click('preset-1800');
    click('amount-next');
    click('method-ACH');
    type('ach-routing', '021000021');
    type('ach-account', '12345678');
    type('ach-account-confirm', '12345678');
    click('ach-authorise');
    click('method-next');
    click('donor-next');
    click('details-next');
    click('confirm');
    await screen.findByTestId('result-declined');
    expect(screen.getByTestId('result-declined').textContent).toBe('Declined: Card declined');
    expect(data.enqueued[0]?.request).toMatchObject({
      paymentMethodId: 'ACH',
      bankAccount: { routingNum: '021000021', accountNum: '12345678', accountType: 'Checking' },
      card: null,
    });

    // The next donation is refused: over the offline limit, shown on the amount line.
    const { OutboxRefusal } = await import('@kupah/terminal-core');
    data.enqueue = async () => {
      throw new OutboxRefusal('OVER_PAYMENT_LIMIT', 'Offline, one payment may be at most $500.00', [
        { field: 'amount', message: 'is over the offline limit of $500.00' },
      ]);
    };
    click('new-donation');
    click('preset-1800');
    click('amount-next');
    click('method-Provider_1');
    type('charity-number', 'tok_abcdefgh1234');
    click('method-next');
    click('donor-next');
    click('details-next');
    click('confirm');
    await screen.findByTestId('refusal');
    expect(screen.getByTestId('refusal').textContent).toContain('Over the offline limit for one payment.');
    expect(screen.getByTestId('refused-amount').textContent).toContain('amount is over the offline limit');
    expect(screen.getByTestId('review-method').textContent).toBe('Charity card 1 •••• 1234');
  });

  it('first answer PAYMENT_PENDING: "being confirmed" on the result screen, counted apart in the status bar', async () => {
    await start({ outcome: 'confirming' });
    click('preset-1800');
    click('amount-next');
    type('card-number', '4242 4242 4242 4242');
    type('card-expiry', '1230');
    type('card-cvv', '123');
    click('method-next');
    click('donor-next');
    click('details-next');
    click('confirm');
    await screen.findByTestId('result-confirming');
    expect(screen.getByTestId('result-confirming').textContent).toContain('do not charge again');
    await waitFor(() =>
      expect(screen.getByTestId('confirming-count').textContent).toBe('1 being confirmed ($18.00)'),
    );
    expect(screen.getByTestId('queue-count').textContent).toBe('Nothing waiting');
  });

  it('queued and not answered in time: "saved on this device" with the local reference', async () => {
    const { data } = await start();
    click('preset-1800');
    click('amount-next');
    type('card-number', '5555 5555 5555 4444');
    type('card-expiry', '1230');
    type('card-cvv', '123');
    click('method-next');
    type('donor-search', 'stern');
    const result = await screen.findByTestId('donor-result');
    expect(result.textContent).toContain('Rivka Stern');
    fireEvent.click(result);
    expect(screen.getByTestId('donor-selected').textContent).toContain('Rivka Stern');
    click('donor-next');
    click('details-next');
    click('confirm');
    await screen.findByTestId('result-saved');
    expect(screen.getByTestId('result-saved').textContent).toMatch(/Saved on this device.*T-\d{4}/);
    expect(data.enqueued[0]?.request).toMatchObject({ donor: { accountNum: 'D100' } });
    await waitFor(() =>
      expect(screen.getByTestId('queue-count').textContent).toBe('1 waiting to send ($18.00)'),
    );
  });

  it('the queue: the declined stand out; discard needs a reason and the PIN; void needs the manager PIN', async () => {
    const declined = testItem({
      state: 'declined',
      amountMinor: 5400,
      error: { errorCode: 'DECLINED', message: 'Insufficient funds' },
      display: {
        donorName: 'Rivka Stern',
        brand: 'Visa',
        last4: '0002',
        frequency: null,
        collectorAccountNum: null,
      },
    });
    const done = testItem({ state: 'done', receiptNum: 'R77', amountMinor: 3600 });
    const { data, bridge } = await start({ items: [declined, done] });
    click('nav-queue');
    await screen.findByTestId('queue-screen');
    expect(screen.getByTestId('queue-tab-declined').className).toContain('alarm');
    click('queue-tab-declined');
    await screen.findByTestId('declined-explainer');
    const item = screen.getByTestId('queue-item');
    expect(item.textContent).toContain('$54.00');
    expect(item.textContent).toContain('Visa •••• 0002');
    expect(item.textContent).toContain('Insufficient funds');

    // Retry: the card was sealed for one attempt, so it is typed again.
    click('retry');
    await screen.findByTestId('reenter-form');
    expect((screen.getByTestId('reenter-confirm') as HTMLButtonElement).disabled).toBe(true);

    click('discard');
    expect((screen.getByTestId('act-confirm') as HTMLButtonElement).disabled).toBe(true);
    type('act-reason', '   ');
    expect((screen.getByTestId('act-confirm') as HTMLButtonElement).disabled).toBe(true);
    type('act-reason', 'donor paid cash');
    // No manager PIN set: the discard is refused.
    type('act-pin', '1234');
    click('act-confirm');
    await waitFor(() =>
      expect(screen.getByTestId('queue-message').textContent).toBe(
        'No manager PIN is set: set one in Settings first.',
      ),
    );
    await data.saveLocalSettings({ managerPinHash: await derivePinRecord('1234') });
    type('act-pin', '9999');
    click('act-confirm');
    await waitFor(() =>
      expect(screen.getByTestId('queue-message').textContent).toBe(
        'Wrong PIN: 4 tries left before it is locked',
      ),
    );
    expect(data.discarded).toEqual([]);
    type('act-pin', '1234');
    click('act-confirm');
    await waitFor(() => expect(data.discarded).toEqual([{ id: declined.id, reason: 'donor paid cash' }]));
    // The discarded item stays on the device, with why, under its own tab.
    click('queue-tab-discarded');
    await waitFor(() =>
      expect(screen.getByTestId('queue-discard-record').textContent).toContain('donor paid cash'),
    );

    click('queue-tab-done');
    // A receipt printed again from the queue, marked as a copy.
    click('reprint');
    await waitFor(() => expect(bridge.printed).toHaveLength(1));
    const copy = bridge.printed[0] as { lines: string[] };
    expect(copy.lines[0]).toBe('COPY');
    expect(copy.lines.join('\n')).toContain('Receipt no. R77');
    click('void');
    type('act-reason', 'entered twice');
    type('act-pin', '9999');
    click('act-confirm');
    await waitFor(() =>
      expect(screen.getByTestId('queue-message').textContent).toBe(
        'Wrong PIN: 4 tries left before it is locked',
      ),
    );
    // Next to the form it is about, in the payment's row (not below the whole list).
    expect(screen.getByTestId('queue-message').closest('[data-testid="queue-item"]')).toBe(
      screen.getByTestId('act-pin').closest('[data-testid="queue-item"]'),
    );
    expect(data.voids).toEqual([]);
    type('act-pin', '1234');
    click('act-confirm');
    await waitFor(() => expect(data.voids).toEqual([{ receiptNum: 'R77', reason: 'entered twice' }]));
    // Voided (or on its way): no second void.
    await waitFor(() => expect(screen.queryByTestId('void')).toBeNull());
  });

  it('kiosk in the organisation’s look: its logo and colour from its settings', async () => {
    const logo = 'data:image/png;base64,iVBORw0KGgo=';
    useTerminal.setState({ settings: { ...settings, brand: { color: '#7a1f4e', logo } } });
    await start({
      local: { mode: 'kiosk', kioskIdleSeconds: 15 },
      settings: { ...settings, brand: { color: '#7a1f4e', logo } },
    });
    // The welcome screen first, then the amount screen keep the organisation's look.
    expect(screen.getByTestId('welcome-logo').getAttribute('src')).toBe(logo);
    expect(screen.getByTestId('app').style.getPropertyValue('--brand')).toBe('#7a1f4e');
    click('kiosk-start');
    expect(screen.getByTestId('kiosk-logo').getAttribute('src')).toBe(logo);
  });

  it('kiosk welcome screen: the organisation, one big start, the donor’s language; an idle kiosk comes back to it', async () => {
    await start({ local: { mode: 'kiosk', kioskIdleSeconds: 15 } });
    expect(screen.getByTestId('welcome-org').textContent).toBe(settings.orgName);
    expect(screen.queryByTestId('amount-screen')).toBeNull();
    vi.useFakeTimers();
    // Nobody there: the welcome screen stays, with no countdown.
    act(() => void vi.advanceTimersByTime(60_000));
    expect(screen.queryByTestId('idle-warning')).toBeNull();
    await act(async () => {
      click('welcome-language');
      await vi.advanceTimersByTimeAsync(10);
    });
    expect(screen.getByTestId('welcome-screen').querySelector('h1')!.textContent).toBe('ברוכים הבאים');
    click('kiosk-start');
    expect(screen.getByTestId('amount-screen')).toBeTruthy();
    // A donor who starts and walks away (nothing typed): back to the welcome, in the device's language.
    await act(async () => {
      await vi.advanceTimersByTimeAsync(16_000);
    });
    expect(screen.getByTestId('welcome-screen').querySelector('h1')!.textContent).toBe('Welcome');
    // Back (Escape) from the amount screen leads to the welcome screen too.
    click('kiosk-start');
    fireEvent.keyDown(window, { key: 'Escape' });
    expect(screen.getByTestId('welcome-screen')).toBeTruthy();
  });

  it('kiosk for donors: the organisation’s name, a custom amount, a cause by name, English/Hebrew; the idle reset restores all', async () => {
    const { data } = await start({ local: { mode: 'kiosk', kioskIdleSeconds: 15 } });
    vi.useFakeTimers();
    click('kiosk-start');
    await act(async () => {
      await vi.advanceTimersByTimeAsync(10);
    });
    const causes = screen.getByTestId('kiosk-campaigns');
    const heading = () => screen.getByTestId('amount-screen').querySelector('h1')!.textContent;
    expect(screen.getByTestId('kiosk-org').textContent).toBe(settings.orgName);
    // Presets, and "Other amount" for the donor's own: the keypad opens.
    expect(screen.queryByTestId('key-2')).toBeNull();
    click('kiosk-other-amount');
    click('key-2');
    click('key-5');
    expect(screen.getByTestId('amount-display').textContent).toBe('$25.00');
    // A cause, by its name.
    expect(causes.textContent).toContain('Building Fund');
    fireEvent.click(causes.querySelector('button')!);
    expect(useTerminal.getState().draft.campaignNum).toBe(1);
    // The donor's language.
    await act(async () => {
      click('kiosk-language');
      await vi.advanceTimersByTimeAsync(10);
    });
    expect(heading()).toBe('תרמו עכשיו');
    // The donor walks away: the next one starts afresh, in the device's language.
    await act(async () => {
      await vi.advanceTimersByTimeAsync(16_000);
    });
    click('kiosk-start');
    expect(heading()).toBe('Give a donation');
    expect(useTerminal.getState().draft).toMatchObject({ amountText: '', campaignNum: null });
    expect(data.enqueued).toEqual([]);
  });

  it('kiosk: big presets, fewer steps, and after the idle time everything is cleared', async () => {
    await start({ local: { mode: 'kiosk', kioskIdleSeconds: 15 } });
    expect(screen.queryByTestId('nav-queue')).toBeNull();
    vi.useFakeTimers();
    click('kiosk-start');
    click('preset-3600');
    click('amount-next');
    type('card-number', '4242424242424242');
    type('card-expiry', '12/30');
    type('card-cvv', '123');
    click('method-next');
    click('donor-anonymous');
    click('donor-next');
    // No campaign/reason step at the kiosk: straight to the review.
    expect(screen.getByTestId('review-screen')).toBeTruthy();
    act(() => void vi.advanceTimersByTime(6_000));
    expect(screen.getByTestId('idle-warning').textContent).toContain('Starting over in 9 s');
    act(() => void vi.advanceTimersByTime(10_000));
    expect(screen.getByTestId('welcome-screen')).toBeTruthy();
    click('kiosk-start');
    expect(screen.getByTestId('amount-display').textContent).toBe('$0.00');
    expect(useTerminal.getState().draft.donor.mode).toBe('none');
    expect(screen.queryByTestId('idle-warning')).toBeNull();
  });

  it('collector mode: the collector is in the header and on every donation', async () => {
    const collector = {
      accountNum: 'C7',
      title: null,
      firstName: 'Moshe',
      lastName: 'Katz',
      firstNameHebrew: null,
      lastNameHebrew: null,
      phones: [],
      emails: [],
    };
    const { data } = await start({
      local: { mode: 'collector', collectorAccountNum: 'C7' },
      collectors: [collector],
    });
    await waitFor(() =>
      expect(screen.getByTestId('collector-name').textContent).toBe('Collector: Moshe Katz'),
    );
    click('preset-1800');
    click('amount-next');
    type('card-number', '4242424242424242');
    type('card-expiry', '12/30');
    type('card-cvv', '123');
    click('method-next');
    click('donor-next');
    click('details-next');
    click('confirm');
    await screen.findByTestId('result-screen');
    expect(data.enqueued[0]?.request).toMatchObject({ collectorId: 'C7' });
  });

  it('a revoked device says so on every screen and takes no donation', async () => {
    await start();
    act(() => useTerminal.setState({ status: { ...useTerminal.getState().status, phase: 'revoked' } }));
    expect(screen.getByTestId('revoked-banner').textContent).toBe(
      'This device was revoked: ask your administrator to pair it again.',
    );
    click('preset-1800');
    expect((screen.getByTestId('amount-next') as HTMLButtonElement).disabled).toBe(true);
    click('nav-queue');
    expect(screen.getByTestId('revoked-banner')).toBeTruthy();
    act(() => useTerminal.setState({ status: { ...useTerminal.getState().status, phase: 'idle' } }));
  });

  it('pairing: a refused code is shown next to the code, an unreachable server next to the address', async () => {
    await start({ paired: false, pairError: new PairingError('PAIRING_CODE_INVALID', 'nope') });
    type('pair-url', 'http://127.0.0.1:9');
    type('pair-code', 'K7QF');
    expect(screen.getByTestId('pair-code-error').textContent).toContain('8-character');
    expect((screen.getByTestId('pair-submit') as HTMLButtonElement).disabled).toBe(true);
    type('pair-code', 'K7QF-3MZP');
    click('pair-submit');
    await waitFor(() =>
      expect(screen.getByTestId('pair-code-error').textContent).toContain('refused this code'),
    );
  });

  it('pairing: a code typed with a space, in lower case, or pasted with line breaks is accepted and sent as XXXX-XXXX', async () => {
    const { data } = await start({ paired: false });
    const sent: string[] = [];
    data.pair = async (_url, code) => {
      sent.push(code);
      throw new PairingError('PAIRING_CODE_INVALID', 'nope');
    };
    type('pair-url', 'http://127.0.0.1:9');
    for (const typed of ['7nbh emtv', ' 7NBH\nEMTV ', '7NBH-EMTV']) {
      type('pair-code', typed);
      expect(screen.queryByTestId('pair-code-error')).toBeNull();
      click('pair-submit');
      await waitFor(() =>
        expect(sent).toHaveLength(['7nbh emtv', ' 7NBH\nEMTV ', '7NBH-EMTV'].indexOf(typed) + 1),
      );
    }
    expect(sent).toEqual(['7NBH-EMTV', '7NBH-EMTV', '7NBH-EMTV']);
    expect((screen.getByTestId('pair-code') as HTMLInputElement).maxLength).toBeGreaterThanOrEqual(20);
  });

  it("pairing: a code in the address (the console's link #pair=…) fills the code field and leaves the address", async () => {
    history.replaceState(null, '', '/terminal/#pair=k7qf-3mzp');
    const { data } = await start({ paired: false });
    const sent: string[] = [];
    data.pair = async (_url, code) => {
      sent.push(code);
      throw new PairingError('PAIRING_CODE_INVALID', 'nope');
    };
    expect((screen.getByTestId('pair-code') as HTMLInputElement).value).toBe('K7QF-3MZP');
    expect(location.hash).toBe('');
    expect(location.pathname).toBe('/terminal/');
    type('pair-url', 'http://127.0.0.1:9');
    click('pair-submit');
    await waitFor(() => expect(sent).toEqual(['K7QF-3MZP']));
    history.replaceState(null, '', '/');
  });

  it('pairing: a malformed code in the address is not taken', () => {
    expect(pairingCodeFromAddress('#pair=K7QF-3MZP')).toBe('K7QF-3MZP');
    expect(pairingCodeFromAddress('#pair=k7qf%203mzp')).toBe('K7QF-3MZP');
    expect(pairingCodeFromAddress('#pair=%E0%A4%A')).toBe('');
    expect(pairingCodeFromAddress('#pair=<script>')).toBe('');
    expect(pairingCodeFromAddress('#other=K7QF-3MZP')).toBe('');
    expect(pairingCodeFromAddress('')).toBe('');
  });

  it('settings: PIN-locked once a PIN is set; coordinates in range; language switches the layout', async () => {
    // A PIN set by an older version (bare SHA-256): it opens once and is replaced by PBKDF2.
    const { data } = await start({ local: { managerPinHash: await sha256Hex('4321') } });
    click('nav-settings');
    await screen.findByTestId('settings-locked');
    type('unlock-pin', '1111');
    click('unlock');
    await screen.findByTestId('unlock-error');
    type('unlock-pin', '4321');
    click('unlock');
    await screen.findByTestId('settings-screen');
    expect(data.local().managerPinHash).toMatch(/^pbkdf2-sha256\$/);
    type('settings-latitude', '91');
    expect(screen.getByTestId('settings-latitude-error').textContent).toBe('Between -90 and 90');
    expect((screen.getByTestId('settings-save') as HTMLButtonElement).disabled).toBe(true);
    type('settings-latitude', '40.7');
    expect(screen.getByTestId('settings-longitude-error').textContent).toContain('both');
    type('settings-longitude', '-74');
    type('settings-pin', '12');
    expect((screen.getByTestId('settings-save') as HTMLButtonElement).disabled).toBe(true);
    type('settings-pin', '123456');
    fireEvent.change(screen.getByTestId('settings-language'), { target: { value: 'he' } });
    click('settings-save');
    await screen.findByTestId('settings-note');
    expect(document.documentElement.dir).toBe('rtl');
    expect(data.local()).toMatchObject({ language: 'he', location: { latitude: 40.7, longitude: -74 } });
    expect((await verifyPinRecord('123456', data.local().managerPinHash!)).ok).toBe(true);
  });
});
