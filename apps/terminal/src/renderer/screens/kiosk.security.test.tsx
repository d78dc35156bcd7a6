// @vitest-environment happy-dom
/**
 * The kiosk against the donor standing at it: no donor search ("D1", "555" show nothing), only
 * self-identification by a whole phone number or e-mail address (own name only); no staff status
 * bar; Settings and the queue behind the manager PIN, which locks after 5 wrong tries; kiosk mode
 * not turned on without a PIN; card fields that a browser does not remember or fill.
 */

import {
  DEFAULT_LOCAL_SETTINGS,
  derivePinRecord,
  LocalSettingsInvalid,
  mergeLocalSettings,
} from '@kupah/terminal-core';
import { testSettings } from '@kupah/terminal-core/testing';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { I18nextProvider } from 'react-i18next';
import { afterEach, describe, expect, it } from 'vitest';
import {
  TEST_DONORS,
  type TestDataOptions,
  testBridge,
  testTerminalData,
} from '../../../test/test-terminal-data.ts';
import { App } from '../app.tsx';
import { ServicesContext } from '../app-context.ts';
import { clearSwipe } from '../forms/swipe-capture.ts';
import { applyLanguage, i18n } from '../i18n/index.ts';
import { emptyDraft, useTerminal } from '../store/terminal-store.ts';
import { MethodScreen } from './method-screen.tsx';

const settings = testSettings({ coverFeePercent: 0, presetsMinor: [1800, 3600] });
const PIN = await derivePinRecord('2468');
const rivka = TEST_DONORS[0]!;

async function start(opts: Partial<TestDataOptions> = {}) {
  useTerminal.setState({ screen: 'pairing', draft: emptyDraft(), settings: null, local: null, result: null });
  const data = testTerminalData({ settings, ...opts });
  render(
    <I18nextProvider i18n={i18n}>
      <ServicesContext.Provider value={{ data, bridge: testBridge() }}>
        <App />
      </ServicesContext.Provider>
    </I18nextProvider>,
  );
  await screen.findByTestId(opts.local?.mode === 'kiosk' ? 'welcome-screen' : 'amount-screen');
  return data;
}
/** A kiosk, past its welcome screen (a donor touched "Donate now"). */
async function kiosk() {
  const data = await start({ local: { mode: 'kiosk', managerPinHash: PIN } });
  fireEvent.click(screen.getByTestId('kiosk-start'));
  await screen.findByTestId('amount-screen');
  return data;
}

const click = (testId: string) => fireEvent.click(screen.getByTestId(testId));
const type = (testId: string, value: string) =>
  fireEvent.change(screen.getByTestId(testId), { target: { value } });
const page = () => document.body.textContent ?? '';

/** Amount and card, to the donor step. */
async function toDonor() {
  click('preset-1800');
  click('amount-next');
  await screen.findByTestId('method-screen');
  type('card-number', '4242424242424242');
  type('card-expiry', '12/30');
  type('card-cvv', '123');
  click('method-next');
  await screen.findByTestId('donor-screen');
}

afterEach(async () => {
  cleanup();
  clearSwipe();
  await applyLanguage('en');
});

describe('kiosk: the donor step', () => {
  it('has no search: "D1", "555" and a partial address show no donor, account or phone', async () => {
    await kiosk();
    await toDonor();
    expect(screen.queryByTestId('donor-search')).toBeNull();
    for (const attempt of ['D1', 'D100', '555', 'Rivka', 'rivka@', '305555']) {
      type('donor-identify', attempt);
      click('donor-identify-submit');
      await screen.findByTestId('donor-not-found');
      expect(screen.queryByTestId('donor-result')).toBeNull();
      expect(screen.queryByTestId('donor-selected')).toBeNull();
      for (const secret of ['Stern', 'D100', '3055550123', 'rivka@example.org']) {
        expect(page()).not.toContain(secret);
      }
    }
  });

  it('a whole phone number finds the donor, who sees only their own name; no match reveals nothing', async () => {
    await kiosk();
    await toDonor();
    type('donor-identify', '2125550199');
    click('donor-identify-submit');
    expect((await screen.findByTestId('donor-not-found')).textContent).toBe(
      'Not found: continue anonymously, or as a new donor.',
    );
    type('donor-identify', rivka.phones[0]!);
    click('donor-identify-submit');
    const chosen = await screen.findByTestId('donor-selected');
    expect(chosen.textContent).toContain('Welcome, Rivka Stern');
    expect(page()).not.toContain(rivka.accountNum);
    expect(page()).not.toContain(rivka.emails[0]!);
    expect(useTerminal.getState().draft.donor).toMatchObject({
      mode: 'existing',
      existing: { accountNum: 'D100' },
    });
  });
});

describe('kiosk: staff only behind the manager PIN', () => {
  it('donors never see the staff status bar; the staff entry asks for the PIN', async () => {
    await kiosk();
    expect(screen.queryByTestId('status-bar')).toBeNull();
    expect(screen.queryByTestId('queue-count')).toBeNull();
    expect(screen.queryByTestId('nav-queue')).toBeNull();
    click('nav-settings');
    await screen.findByTestId('settings-locked');
    expect(screen.queryByTestId('settings-mode')).toBeNull();
    expect(screen.queryByTestId('unpair')).toBeNull();
    expect(screen.queryByTestId('sync-now')).toBeNull();
    type('unlock-pin', '2468');
    click('unlock');
    await screen.findByTestId('settings-screen');
    // Staff reach the queue (declined and expiring donations) from the unlocked Settings only.
    click('settings-queue');
    await screen.findByTestId('queue-locked');
  });

  it('5 wrong PINs lock Settings; the right PIN is then refused too, with the time left', async () => {
    const data = await kiosk();
    click('nav-settings');
    await screen.findByTestId('settings-locked');
    for (const [i, guess] of ['0000', '1111', '2222', '3333'].entries()) {
      type('unlock-pin', guess);
      click('unlock');
      await waitFor(() =>
        expect(screen.getByTestId('unlock-error').textContent).toBe(
          `Wrong PIN: ${4 - i} tries left before it is locked`,
        ),
      );
    }
    type('unlock-pin', '4444');
    click('unlock');
    await waitFor(() =>
      expect(screen.getByTestId('unlock-error').textContent).toBe(
        'Too many wrong PINs: locked, try again in 5 min',
      ),
    );
    type('unlock-pin', '2468');
    click('unlock');
    await waitFor(() =>
      expect(screen.getByTestId('unlock-error').textContent).toMatch(/^Too many wrong PINs/),
    );
    expect(screen.queryByTestId('settings-screen')).toBeNull();
    // Kept in the stored settings: a reload finds it.
    expect(data.local()).toMatchObject({ pinLock: { failures: 0, lockouts: 1 } });
  });

  it('the queue (void, discard) is behind the PIN at a kiosk', async () => {
    await kiosk();
    useTerminal.getState().go('queue');
    await screen.findByTestId('queue-locked');
    expect(screen.queryByTestId('queue-screen')).toBeNull();
    type('unlock-pin', '1357');
    click('unlock');
    await screen.findByTestId('unlock-error');
    expect(screen.queryByTestId('queue-screen')).toBeNull();
  });

  it('kiosk mode cannot be turned on without a manager PIN', async () => {
    const data = await start();
    click('nav-settings');
    await screen.findByTestId('settings-screen');
    fireEvent.change(screen.getByTestId('settings-mode'), { target: { value: 'kiosk' } });
    expect(screen.getByTestId('settings-pin-error').textContent).toBe(
      'Kiosk mode needs a manager PIN: set one here first.',
    );
    expect((screen.getByTestId('settings-save') as HTMLButtonElement).disabled).toBe(true);
    click('settings-save');
    expect(data.local().mode).toBe('cashier');
    // The stored settings refuse it too, whatever screen asks.
    expect(() => mergeLocalSettings(DEFAULT_LOCAL_SETTINGS, { mode: 'kiosk' })).toThrow(LocalSettingsInvalid);
    const kioskWithPin = mergeLocalSettings(DEFAULT_LOCAL_SETTINGS, { mode: 'kiosk', managerPinHash: PIN });
    expect(() => mergeLocalSettings(kioskWithPin, { managerPinHash: null })).toThrow(LocalSettingsInvalid);
    // With a PIN typed, it is set and kiosk mode turned on.
    type('settings-pin', '2468');
    click('settings-save');
    await waitFor(() => expect(data.local().mode).toBe('kiosk'));
    expect(data.local().managerPinHash).toMatch(/^pbkdf2-sha256\$/);
  });
});

describe('card fields', () => {
  for (const mode of ['cashier', 'kiosk'] as const) {
    it(`${mode}: no autofill and no name a browser would remember`, () => {
      useTerminal.setState({
        settings,
        local: { ...DEFAULT_LOCAL_SETTINGS, mode, managerPinHash: PIN },
        draft: emptyDraft('USD'),
        screen: 'method',
      });
      const check = (ids: string[]) => {
        for (const id of ids) {
          const input = screen.getByTestId(id);
          expect(input.getAttribute('autocomplete'), id).toBe('off');
          expect(input.hasAttribute('name'), id).toBe(false);
        }
      };
      render(
        <I18nextProvider i18n={i18n}>
          <ServicesContext.Provider value={{ data: testTerminalData({ settings }), bridge: testBridge() }}>
            <MethodScreen />
          </ServicesContext.Provider>
        </I18nextProvider>,
      );
      expect(screen.getByTestId('method-screen').getAttribute('autocomplete')).toBe('off');
      check(['card-number', 'card-expiry', 'card-cvv', 'card-holder']);
      fireEvent.click(screen.getByTestId('method-ACH'));
      check(['ach-routing', 'ach-account', 'ach-account-confirm', 'ach-holder']);
    });
  }
});
