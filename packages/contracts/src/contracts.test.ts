import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  amount,
  chargeRequest,
  civilDate,
  NO_BIDI_CONTROLS_MESSAGE,
  pushRequest,
  saveCampaignRequest,
  saveCollectorRequest,
  saveDonorRequest,
  saveReasonRequest,
  scheduleRequest,
  toMinorUnits,
  utcDateTime,
  withoutBidiControls,
} from './index.ts';

const guid = '3f2b8c1e-5d4a-4c7e-9b1f-2a6d8e0c4b71';
const base = {
  orgGUID: guid,
  paymentMethodId: 'Credit_Card',
  currency: 'USD',
  card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
};

describe('amounts', () => {
  it('accept ≤ 2 decimals in (0, 1,000,000], as numbers or numeric strings', () => {
    expect(amount().parse(18)).toBe(18);
    expect(amount().parse('18.50')).toBe(18.5);
    expect(amount().parse(1_000_000)).toBe(1_000_000);
    for (const bad of [
      0,
      -1,
      1_000_000.01,
      1.001,
      Number.NaN,
      '1e3',
      '18.5.0',
      '',
      1e-9,
      18.000000001,
      0.1 + 0.2,
    ]) {
      expect(amount().safeParse(bad).success, String(bad)).toBe(false);
    }
  });

  it('toMinorUnits is exact for every 2-decimal amount', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000_000 }), (cents) => {
        const major = Number((cents / 100).toFixed(2));
        expect(amount().parse(major)).toBe(major);
        expect(toMinorUnits(major)).toBe(cents);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('dates', () => {
  it('civil dates: real calendar dates only; a date-time gives its date part', () => {
    expect(civilDate().parse('2028-02-29')).toBe('2028-02-29');
    expect(civilDate().parse('2026-11-22T00:00:00')).toBe('2026-11-22');
    for (const bad of [
      '2027-02-29',
      '2026-13-01',
      '2026-04-31',
      '22/11/2026',
      '2026-1-1',
      'tomorrow',
      '0000-01-01',
      '3000-01-01',
    ]) {
      expect(civilDate().safeParse(bad).success, bad).toBe(false);
    }
  });

  it('UTC date-times: a date alone is midnight UTC; offsets are converted; no zone means UTC', () => {
    expect(utcDateTime().parse('2026-11-22')).toBe('2026-11-22T00:00:00.000Z');
    expect(utcDateTime().parse('2026-11-22T10:00:00+02:00')).toBe('2026-11-22T08:00:00.000Z');
    expect(utcDateTime().parse('2026-11-22T10:00:00')).toBe('2026-11-22T10:00:00.000Z');
    expect(utcDateTime().safeParse('2026-11-22T25:00:00Z').success).toBe(false);
    expect(utcDateTime().safeParse('0000-01-01T00:00:00Z').success).toBe(false);
  });
});

describe('Charge request', () => {
  it('canonicalises spellings: orgGuid → orgGUID, CA → CAD, "Credit Card" → Credit_Card, collectorID', () => {
    const r = chargeRequest.parse({
      ...base,
      orgGUID: undefined,
      orgGuid: guid,
      currency: 'CA',
      paymentMethodId: 'Credit Card',
      amount: 5,
      uniqueTransactionId: 'x',
      collectorID: 'C1001',
    });
    expect(r).toMatchObject({
      orgGuid: guid,
      currency: 'CAD',
      paymentMethodId: 'Credit_Card',
      collectorId: 'C1001',
    });
  });

  it('text with a NUL character is refused (PostgreSQL cannot store it)', () => {
    const r = chargeRequest.safeParse({ ...base, amount: 5, uniqueTransactionId: 'x', note: 'a\u0000b' });
    expect(r.error?.issues.map((i) => i.path.join('.'))).toEqual(['note']);
  });

  it('two different org spellings that disagree are refused', () => {
    const r = chargeRequest.safeParse({
      ...base,
      orgGuid: '00000000-0000-4000-8000-000000000000',
      amount: 5,
      uniqueTransactionId: 'x',
    });
    expect(r.success).toBe(false);
  });

  it('a card method needs card.ccNum; ACH needs bankAccount', () => {
    const noCard = chargeRequest.safeParse({ ...base, card: null, amount: 5, uniqueTransactionId: 'x' });
    expect(noCard.error?.issues[0]?.path).toEqual(['card', 'ccNum']);
    const noBank = chargeRequest.safeParse({
      ...base,
      paymentMethodId: 'ACH',
      amount: 5,
      uniqueTransactionId: 'x',
    });
    expect(noBank.error?.issues[0]?.path).toEqual(['bankAccount']);
  });
});

describe('schedule amounts', () => {
  const sched = (amountTotal: number | undefined, details: Record<string, unknown>) =>
    scheduleRequest.safeParse({
      ...base,
      amount: amountTotal,
      uniqueTransactionId: guid,
      scheduleDetails: { frequencyID: 'Monthly', startDate: '2030-01-01', ...details },
    });

  it.each([
    [
      120,
      { totalPaymentsCount: 12, amountPerPayment: 10 },
      { totalMinor: 12000, firstMinor: 1000, perPaymentMinor: 1000, count: 12 },
    ],
    [
      undefined,
      { totalPaymentsCount: 12, amountPerPayment: 10 },
      { totalMinor: 12000, firstMinor: 1000, perPaymentMinor: 1000, count: 12 },
    ],
    [
      100,
      { totalPaymentsCount: 3 },
      { totalMinor: 10000, firstMinor: 3334, perPaymentMinor: 3333, count: 3 },
    ],
    [
      100,
      { totalPaymentsCount: 3, firstPaymentAmount: 50 },
      { totalMinor: 10000, firstMinor: 5000, perPaymentMinor: 2500, count: 3 },
    ],
    [
      100,
      { amountPerPayment: 25, firstPaymentAmount: 50 },
      { totalMinor: 10000, firstMinor: 5000, perPaymentMinor: 2500, count: 3 },
    ],
    [18, { totalPaymentsCount: 1 }, { totalMinor: 1800, firstMinor: 1800, perPaymentMinor: 1800, count: 1 }],
  ])('total %s with %o derives %o', (total, details, expected) => {
    const r = sched(total, details);
    expect(r.success).toBe(true);
    expect(r.data?.amounts).toEqual(expected);
  });

  it.each([
    [99, { totalPaymentsCount: 3, firstPaymentAmount: 50, amountPerPayment: 25 }, 'amount'],
    [100, { totalPaymentsCount: 3, firstPaymentAmount: 50, amountPerPayment: 10 }, 'amount'],
    [undefined, { amountPerPayment: 10 }, 'scheduleDetails.totalPaymentsCount'],
    [0.02, { totalPaymentsCount: 3 }, 'amount'],
    [20, { totalPaymentsCount: 1, firstPaymentAmount: 10 }, 'amount'],
  ])('total %s with %o is refused on %s', (total, details, field) => {
    const r = sched(total, details);
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toContain(field);
  });

  it('derived amounts always satisfy total = first + per × (count − 1)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000_000 }),
        fc.integer({ min: 1, max: 100 }),
        (cents, count) => {
          const r = sched(cents / 100, { totalPaymentsCount: count });
          if (cents < count) return;
          expect(r.success).toBe(true);
          const a = r.data!.amounts;
          expect(a.firstMinor + a.perPaymentMinor * (a.count - 1)).toBe(cents);
          expect(a.firstMinor).toBeGreaterThanOrEqual(a.perPaymentMinor);
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('names cannot carry bidi controls (receipt and list spoofing)', () => {
  /** The embedding, override and isolate controls: each reorders the text shown after it. */
  const CONTROLS = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069'];
  /** LRM, RLM and ALM: marks that reorder no letter or digit; ordinary in Hebrew text. */
  const MARKS = ['\u200E', '\u200F', '\u061C'];
  const donor = { orgGuid: guid, donorID: '', firstName: 'Dvora', lastName: 'Katz' };
  const charge = { ...base, amount: 18, uniqueTransactionId: 'bidi-1' };
  const cases: Array<{ name: string; parse(value: string): { success: boolean; error?: unknown } }> = [
    ...['firstName', 'lastName', 'firstNameHebrew', 'lastNameHebrew'].map((k) => ({
      name: `Charge donor.${k}`,
      parse: (v: string) => chargeRequest.safeParse({ ...charge, donor: { [k]: v } }),
    })),
    ...(['campaign', 'reason'] as const).map((k) => ({
      name: `Charge ${k}.${k}Name`,
      parse: (v: string) => chargeRequest.safeParse({ ...charge, [k]: { [`${k}Name`]: v } }),
    })),
    {
      name: 'Charge reasons[].reasonName',
      parse: (v: string) =>
        chargeRequest.safeParse({ ...charge, reasons: [{ reasonAmount: 18, reasonName: v }] }),
    },
    {
      name: 'Charge card.cardHolderName',
      parse: (v: string) => chargeRequest.safeParse({ ...charge, card: { ...base.card, cardHolderName: v } }),
    },
    {
      name: 'Charge deviceInfo.deviceName',
      parse: (v: string) => chargeRequest.safeParse({ ...charge, deviceInfo: { deviceName: v } }),
    },
    ...[
      'title',
      'firstName',
      'lastName',
      'titleHebrew',
      'firstNameHebrew',
      'lastNameHebrew',
      'suffixHebrew',
    ].map((k) => ({
      name: `SaveDonor ${k}`,
      parse: (v: string) => saveDonorRequest.safeParse({ ...donor, [k]: v }),
    })),
    {
      name: 'SaveCollector lastName',
      parse: (v: string) => saveCollectorRequest.safeParse({ orgGuid: guid, collectorID: '', lastName: v }),
    },
    ...['reasonName', 'reasonNameHebrew'].map((k) => ({
      name: `SaveReason ${k}`,
      parse: (v: string) =>
        saveReasonRequest.safeParse({ orgGuid: guid, reasonNumber: 0, reasonName: 'Kiddush', [k]: v }),
    })),
    ...['campaignName', 'campaignFriendlyName'].map((k) => ({
      name: `SaveCampaign ${k}`,
      parse: (v: string) =>
        saveCampaignRequest.safeParse({ orgGuid: guid, campaignNumber: 0, campaignName: 'Gala', [k]: v }),
    })),
  ];

  it('refuses every embedding, override and isolate control in every name field, with the reason', () => {
    for (const c of cases) {
      for (const control of CONTROLS) {
        const r = c.parse(`Gala ${control}0001 Fund`);
        const label = `${c.name} U+${control.codePointAt(0)!.toString(16).toUpperCase()}`;
        expect(r.success, label).toBe(false);
        expect(JSON.stringify(r.error), label).toContain(NO_BIDI_CONTROLS_MESSAGE);
      }
    }
  });

  it('accepts Hebrew names with direction marks (the check cannot pass by refusing everything)', () => {
    for (const c of cases) {
      expect(c.parse('כהן (Cohen)').success, c.name).toBe(true);
      for (const mark of MARKS) expect(c.parse(`כהן${mark} (Cohen) 18`).success, c.name).toBe(true);
    }
  });

  it('withoutBidiControls strips the controls (for text stored before the check) and keeps the marks', () => {
    expect(withoutBidiControls('Dvora \u202E0001\u202C \u2067x\u2069')).toBe('Dvora 0001 x');
    expect(withoutBidiControls('כהן\u200F (Cohen)')).toBe('כהן\u200F (Cohen)');
  });
});

describe('push request', () => {
  const push = (depth: number) => ({
    deviceId: 'dev_1',
    queue: { depth, totalMinor: 0 },
    operations: [
      {
        opId: guid,
        kind: 'charge',
        deviceCreatedDate: '2026-11-22T14:30:00Z',
        request: { amount: 18 },
      },
    ],
  });

  it('bounds the reported queue depth by the int column the server keeps it in', () => {
    expect(pushRequest.safeParse(push(2 ** 31 - 1)).success).toBe(true);
    for (const depth of [2 ** 31, 2 ** 40, Number.MAX_SAFE_INTEGER]) {
      const r = pushRequest.safeParse(push(depth));
      expect(r.success, String(depth)).toBe(false);
      expect(r.error?.issues[0]).toMatchObject({
        path: ['queue', 'depth'],
        message: 'must be at most 2147483647',
      });
    }
  });
});
