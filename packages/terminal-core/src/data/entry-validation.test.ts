import { describe, expect, it } from 'vitest';
import { testSettings } from '../../testing/fake-settings.ts';
import { checkEntry } from './entry-validation.ts';

const NOW = new Date('2026-03-01T10:00:00Z');
const OP_ID = '0b7f3a52-7c1d-4e0a-9f2b-6d8e1c3a5b70';
const settings = testSettings();

const charge = (over: Record<string, unknown> = {}) => ({
  orgGUID: settings.orgGuid,
  uniqueTransactionId: OP_ID,
  amount: 18,
  currency: 'USD',
  paymentMethodId: 'Credit_Card',
  card: { ccNum: '4242 4242 4242 4242', expiry: '12/39', cvv: '123' },
  ...over,
});

const fieldsOf = (r: ReturnType<typeof checkEntry>) => (r.ok ? [] : r.fields.map((f) => f.field));

describe('checkEntry', () => {
  it('accepts a good card charge and reports brand, last 4 and minor units', () => {
    const r = checkEntry('charge', charge({ amount: 18.5 }), { now: NOW, settings });
    expect(r).toEqual({
      ok: true,
      value: {
        amountMinor: 1850,
        largestChargeMinor: 1850,
        currency: 'USD',
        method: 'Credit_Card',
        brand: 'Visa',
        last4: '4242',
        frequency: null,
      },
    });
  });

  it('refuses a card with a bad check digit, an expired card and a short CVV, all at once', () => {
    const r = checkEntry(
      'charge',
      charge({ card: { ccNum: '4242424242424241', expiry: '01/26', cvv: '12' } }),
      {
        now: NOW,
        settings,
      },
    );
    expect(fieldsOf(r).sort()).toEqual(['card.ccNum', 'card.cvv', 'card.expiry']);
    expect(JSON.stringify(r)).not.toContain('4242424242424241');
  });

  it('a swiped card needs no CVV; a typed one does', () => {
    const noCvv = charge({ card: { ccNum: '4242424242424242', expiry: '12/39' } });
    expect(fieldsOf(checkEntry('charge', noCvv, { now: NOW, settings }))).toEqual(['card.cvv']);
    expect(checkEntry('charge', noCvv, { now: NOW, settings, swiped: true }).ok).toBe(true);
  });

  it('refuses an ACH payment with a bad routing number', () => {
    const ach = charge({
      paymentMethodId: 'ACH',
      card: null,
      bankAccount: { routingNum: '021000022', accountNum: '123456789' },
    });
    const r = checkEntry('charge', ach, { now: NOW, settings });
    expect(r.ok ? [] : r.fields).toEqual([
      { field: 'bankAccount.routingNum', message: 'is not a valid ABA routing number' },
    ]);
    const good = checkEntry(
      'charge',
      { ...ach, bankAccount: { routingNum: '021000021', accountNum: '123456789' } },
      { now: NOW, settings },
    );
    expect(good.ok && good.value).toMatchObject({ brand: 'ACH', last4: '6789' });
  });

  it('checks a charity card by its provider form', () => {
    const ok = checkEntry('charge', charge({ paymentMethodId: 'Provider_2', card: { ccNum: '12345678' } }), {
      now: NOW,
      settings,
    });
    expect(ok.ok && ok.value).toMatchObject({ brand: 'Provider_2', last4: '5678' });
    const bad = checkEntry('charge', charge({ paymentMethodId: 'Provider_2', card: { ccNum: '12ab' } }), {
      now: NOW,
      settings,
    });
    expect(fieldsOf(bad)).toEqual(['card.ccNum']);
  });

  it('refuses reasons that do not add up to the amount', () => {
    const r = checkEntry(
      'charge',
      charge({
        reasons: [
          { reasonNum: 1, reasonAmount: 10 },
          { reasonNum: 2, reasonAmount: 5 },
        ],
      }),
      { now: NOW, settings },
    );
    expect(r.ok ? [] : r.fields).toEqual([
      { field: 'reasons', message: 'reason amounts add up to 15.00 but the amount is 18.00' },
    ]);
  });

  it('refuses a currency the organisation has not enabled, and a missing amount', () => {
    expect(fieldsOf(checkEntry('charge', charge({ currency: 'EUR' }), { now: NOW, settings }))).toEqual([
      'currency',
    ]);
    expect(fieldsOf(checkEntry('charge', charge({ amount: undefined }), { now: NOW, settings }))).toEqual([
      'amount',
    ]);
  });

  it('a schedule is charged its first instalment now; its largest instalment counts for the limit', () => {
    const r = checkEntry(
      'schedule',
      charge({
        amount: 100,
        scheduleDetails: {
          frequencyID: 'Monthly',
          startDate: '2026-03-01',
          firstPaymentAmount: 10,
          amountPerPayment: 30,
          totalPaymentsCount: 4,
        },
      }),
      { now: NOW, settings },
    );
    expect(r.ok && r.value).toMatchObject({
      amountMinor: 1000,
      largestChargeMinor: 3000,
      frequency: 'Monthly',
    });
  });
});
