import { testSettings } from '@kupah/terminal-core/testing';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { emptyDraft } from '../store/terminal-store.ts';
import { buildEntry, chargedMinor } from './build-entry.ts';
import {
  achConsentErrors,
  amountError,
  amountMinor,
  donorErrors,
  paymentErrors,
  scheduleAmounts,
  scheduleErrors,
  splitErrors,
} from './validate.ts';

const NOW = new Date('2026-11-22T10:00:00Z');
const settings = testSettings({ currencies: ['USD'] });

describe('field validation as the cashier types', () => {
  it('amounts: exact minor units for every valid text, refusals otherwise', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000_000 }), (minor) => {
        const text = `${Math.floor(minor / 100)}.${String(minor % 100).padStart(2, '0')}`;
        expect(amountMinor(text)).toBe(minor);
        expect(amountError(text)).toBeNull();
      }),
    );
    expect(amountError('')).toEqual({ key: 'amount.zero' });
    expect(amountError('0.00')).toEqual({ key: 'amount.zero' });
    expect(amountMinor('1.234')).toBeNull();
  });

  it('cards: Luhn, a past expiry and a short CVV each get their own message', () => {
    const d = emptyDraft();
    d.card = { ccNum: '4242424242424241', expiry: '01/20', cvv: '1', holder: '' };
    const e = paymentErrors(d, NOW);
    expect(e.ccNum?.key).toBe('method.errors.cardNumber');
    expect(e.expiry?.key).toBe('method.errors.expiry');
    d.card = { ccNum: '4242 4242 4242 4242', expiry: '12/30', cvv: '123', holder: '' };
    expect(paymentErrors(d, NOW)).toEqual({});
    d.card = { ccNum: '378282246310005', expiry: '12/30', cvv: '123', holder: '' };
    expect(paymentErrors(d, NOW).cvv).toEqual({ key: 'method.errors.cvv', values: { length: 4 } });
  });

  it('ACH: the ABA checksum of the routing number', () => {
    const d = { ...emptyDraft(), method: 'ACH' as const };
    d.bank = {
      routingNum: '021000022',
      accountNum: '123456789',
      accountConfirm: '',
      accountType: 'Checking',
      holder: '',
      authorised: false,
    };
    expect(paymentErrors(d, NOW).routingNum?.key).toBe('method.errors.routing');
    d.bank.routingNum = '021000021';
    expect(paymentErrors(d, NOW)).toEqual({});
  });

  it('ACH at the terminal: the account number typed twice, the same, and the debit authorisation agreed', () => {
    const d = { ...emptyDraft(), method: 'ACH' as const };
    d.bank = { ...d.bank, routingNum: '021000021', accountNum: '1234 5678 9' };
    expect(achConsentErrors(d)).toEqual({
      accountConfirm: { key: 'method.errors.accountConfirm' },
      achAuthorisation: { key: 'method.errors.achAuthorisation' },
    });
    d.bank.accountConfirm = '123456788';
    expect(achConsentErrors(d).accountConfirm?.key).toBe('method.errors.accountConfirm');
    d.bank.accountConfirm = '12345-6789';
    d.bank.authorised = true;
    expect(achConsentErrors(d)).toEqual({});
    expect(achConsentErrors({ ...emptyDraft(), method: 'Credit_Card' })).toEqual({});
  });

  it('a new donor needs a first and last name in English or in Hebrew', () => {
    const d = { ...emptyDraft().donor, mode: 'new' as const };
    expect(donorErrors(d).name?.key).toBe('donor.namePair');
    expect(donorErrors({ ...d, firstNameHebrew: 'שרה', lastName: 'Cohen' }).name?.key).toBe('donor.namePair');
    expect(donorErrors({ ...d, firstNameHebrew: 'שרה', lastNameHebrew: 'כהן' })).toEqual({});
    expect(donorErrors({ ...d, firstName: 'Sarah', lastName: 'Cohen', email: 'no' }).email?.key).toBe(
      'donor.badEmail',
    );
  });

  it('a split must add up to the amount charged, fee included', () => {
    const d = { ...emptyDraft(), amountText: '100', coverFee: true, split: true };
    const total = chargedMinor(d, settings);
    expect(total).toBe(10_300);
    d.parts = [
      { reasonNum: 1, amountText: '50' },
      { reasonNum: 2, amountText: '50' },
    ];
    expect(splitErrors(d, total).split?.key).toBe('details.splitMustSum');
    d.parts[1] = { reasonNum: 2, amountText: '53' };
    expect(splitErrors(d, total)).toEqual({});
  });

  it('a schedule cannot start in the past', () => {
    const d = { ...emptyDraft(), recurring: true };
    d.schedule = { ...d.schedule, frequency: 'Monthly_Hebrew', countText: '12', startDate: '2026-11-21' };
    expect(scheduleErrors(d, '2026-11-22').startDate?.key).toBe('schedule.badStart');
    d.schedule.startDate = '2026-11-22';
    d.schedule.countText = '0';
    expect(scheduleErrors(d, '2026-11-22')).toEqual({ count: { key: 'schedule.badCount' } });
  });
});

describe('the entry written to the outbox', () => {
  it('a swiped card carries the number from the swipe and no CVV; a schedule totals its payments', () => {
    const d = {
      ...emptyDraft(),
      amountText: '18',
      recurring: true,
      swiped: { brand: 'Visa', last4: '4242' },
    };
    d.schedule = { ...d.schedule, frequency: 'Monthly_Hebrew', countText: '12', startDate: '2026-11-22' };
    const e = buildEntry(
      d,
      { ...settings, coverFeePercent: 0 },
      { ccNum: '4242424242424242', expiry: '12/30' },
      null,
    );
    expect(e.kind).toBe('schedule');
    expect(e.swiped).toBe(true);
    expect(e.request).toMatchObject({
      amount: 216,
      card: { ccNum: '4242424242424242', expiry: '12/30' },
      scheduleDetails: { frequencyID: 'Monthly_Hebrew', totalPaymentsCount: 12, amountPerPayment: 18 },
    });
    expect(JSON.stringify(e.request)).not.toContain('cvv');
  });
});

describe('schedule amounts: a number of payments, or a total', () => {
  it('a total that does not divide evenly puts the remainder in the first payment', () => {
    const d = { ...emptyDraft(), amountText: '18', recurring: true };
    d.schedule = { ...d.schedule, by: 'total', totalText: '100', startDate: '2026-11-22' };
    expect(scheduleAmounts(d, 1800)).toEqual({
      count: 6,
      firstMinor: 1000,
      perMinor: 1800,
      totalMinor: 10_000,
    });
    expect(scheduleErrors(d, '2026-11-22', 1800)).toEqual({});
    const e = buildEntry(d, { ...settings, coverFeePercent: 0 }, null, null);
    expect(e.request).toMatchObject({
      amount: 100,
      scheduleDetails: { totalPaymentsCount: 6, amountPerPayment: 18, firstPaymentAmount: 10 },
    });
    d.schedule.totalText = '10';
    expect(scheduleErrors(d, '2026-11-22', 1800).total?.key).toBe('schedule.totalBelowPayment');
  });

  it('Special_Days needs at least one kind of day, and sends the presets', () => {
    const d = { ...emptyDraft(), amountText: '5', recurring: true };
    d.schedule = { ...d.schedule, frequency: 'Special_Days', startDate: '2026-11-22' };
    // No number of payments is assumed.
    expect(scheduleErrors(d, '2026-11-22', 500).count?.key).toBe('schedule.badCount');
    d.schedule.countText = '12';
    expect(scheduleErrors(d, '2026-11-22', 500).specialDays?.key).toBe('schedule.badSpecialDays');
    d.schedule.specialPresets = ['erev_shabbat'];
    expect(scheduleErrors(d, '2026-11-22', 500)).toEqual({});
    const e = buildEntry(d, { ...settings, coverFeePercent: 0 }, null, null);
    expect(e.request).toMatchObject({ scheduleDetails: { specialDays: { presets: ['erev_shabbat'] } } });
  });

  it('Annually_Hebrew sends the anniversary or yahrzeit custom chosen', () => {
    const d = { ...emptyDraft(), amountText: '18', recurring: true };
    d.schedule = {
      ...d.schedule,
      frequency: 'Annually_Hebrew',
      startDate: '2026-11-22',
      countText: '3',
      anniversaryRule: 'yahrzeit',
    };
    const e = buildEntry(d, { ...settings, coverFeePercent: 0 }, null, null);
    expect(e.request).toMatchObject({
      scheduleDetails: { frequencyID: 'Annually_Hebrew', anniversaryRule: 'yahrzeit' },
    });
    d.schedule.frequency = 'Monthly';
    const monthly = buildEntry(d, { ...settings, coverFeePercent: 0 }, null, null).request as {
      scheduleDetails: Record<string, unknown>;
    };
    expect(monthly.scheduleDetails).not.toHaveProperty('anniversaryRule');
  });

  it('charity cards: 8 to 19 digits or a provider token', () => {
    const d = { ...emptyDraft(), method: 'Provider_2' as const };
    d.charity = { ccNum: '1234' };
    expect(paymentErrors(d, NOW).charity?.key).toBe('method.errors.charity');
    d.charity = { ccNum: '6001 2345 6789' };
    expect(paymentErrors(d, NOW)).toEqual({});
    d.charity = { ccNum: 'tok_abcdefgh12' };
    expect(paymentErrors(d, NOW)).toEqual({});
  });
});
