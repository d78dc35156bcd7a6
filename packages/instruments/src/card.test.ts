import { describe, expect, it } from 'vitest';
import { detectBrand, groupCardNumber, parseExpiry, validateCard } from './card.ts';

const NOW = new Date('2025-06-15T12:00:00Z');
const good = { ccNum: '4242424242424242', expiry: '12/27', cvv: '123' };

function errorsOf(result: ReturnType<typeof validateCard>) {
  return result.ok ? [] : result.errors;
}

describe('validateCard: card number', () => {
  it('accepts a valid card and returns normalised fields', () => {
    expect(validateCard(good, NOW)).toEqual({
      ok: true,
      value: {
        pan: '4242424242424242',
        brand: 'Visa',
        last4: '4242',
        expiry: '12/27',
        expMonth: 12,
        expYear: 2027,
        cvv: '123',
      },
    });
  });

  it('strips spaces and dashes', () => {
    const r = validateCard({ ...good, ccNum: ' 4242 4242-4242 4242 ' }, NOW);
    expect(r.ok && r.value.pan).toBe('4242424242424242');
  });

  it.each([['4242424242424241'], ['4111111111111112'], ['5555555555554445'], ['378282246310006']])(
    'rejects %s (Luhn failure)',
    (ccNum) => {
      const errors = errorsOf(validateCard({ ...good, ccNum, cvv: '1234'.slice(0, 3) }, NOW));
      expect(errors.map((e) => e.field)).toContain('card.ccNum');
      expect(errors.find((e) => e.field === 'card.ccNum')?.message).toMatch(/check digit/);
    },
  );

  it('requires a card number', () => {
    for (const ccNum of [undefined, null, '', '   ']) {
      expect(errorsOf(validateCard({ ...good, ccNum }, NOW))).toEqual([
        { field: 'card.ccNum', message: 'is required' },
      ]);
    }
  });

  it('rejects letters, unknown brands, and wrong lengths', () => {
    expect(errorsOf(validateCard({ ...good, ccNum: '4242abcd42424242' }, NOW))[0]?.field).toBe('card.ccNum');
    expect(errorsOf(validateCard({ ...good, ccNum: '9999999999999995' }, NOW))[0]?.message).toMatch(/brand/);
    expect(errorsOf(validateCard({ ...good, ccNum: '42424242424242' }, NOW))[0]?.message).toMatch(/digits/);
    expect(errorsOf(validateCard({ ...good, ccNum: '12345' }, NOW))[0]?.message).toMatch(/12 to 19/);
  });

  it('never echoes the card number in an error message', () => {
    for (const ccNum of ['4242424242424241', '9999999999999995', '42424242424242', '4242x42424242424']) {
      const r = validateCard({ ccNum, expiry: 'bad', cvv: 'x' }, NOW);
      expect(JSON.stringify(r)).not.toContain(ccNum.slice(0, 8));
    }
  });
});

describe('brand detection', () => {
  it.each([
    ['4242424242424242', 'Visa'],
    ['4111111111111111', 'Visa'],
    ['5555555555554444', 'Mastercard'],
    ['378282246310005', 'American Express'],
    ['4000000000000002', 'Visa'],
    ['4000000000000119', 'Visa'],
    ['6011111111111117', 'Discover'],
    ['3056930009020004', 'Diners Club'],
    ['3566002020360505', 'JCB'],
    ['6200000000000005', 'UnionPay'],
  ])('%s is %s', (ccNum, brand) => {
    expect(detectBrand(ccNum)).toBe(brand);
    const cvv = brand === 'American Express' ? '1234' : '123';
    const r = validateCard({ ccNum, expiry: '01/30', cvv }, NOW);
    expect(r.ok && r.value.brand).toBe(brand);
  });

  it('returns null for non-numbers and unknown prefixes', () => {
    expect(detectBrand('abc')).toBeNull();
    expect(detectBrand('9999')).toBeNull();
  });
});

describe('validateCard: CVV', () => {
  const amex = { ccNum: '378282246310005', expiry: '12/27' };

  it('requires 4 digits for American Express', () => {
    expect(validateCard({ ...amex, cvv: '1234' }, NOW).ok).toBe(true);
    expect(errorsOf(validateCard({ ...amex, cvv: '123' }, NOW))).toEqual([
      { field: 'card.cvv', message: 'must be 4 digits for American Express cards' },
    ]);
  });

  it('requires 3 digits for other brands', () => {
    expect(errorsOf(validateCard({ ...good, cvv: '1234' }, NOW))[0]?.field).toBe('card.cvv');
    expect(errorsOf(validateCard({ ...good, cvv: '12' }, NOW))[0]?.field).toBe('card.cvv');
    expect(errorsOf(validateCard({ ...good, cvv: '12a' }, NOW))[0]?.field).toBe('card.cvv');
  });

  it('is required unless requireCvv is false', () => {
    expect(errorsOf(validateCard({ ...good, cvv: '' }, NOW))).toEqual([
      { field: 'card.cvv', message: 'is required' },
    ]);
    expect(errorsOf(validateCard({ ...good, cvv: null }, NOW))[0]?.field).toBe('card.cvv');
    const r = validateCard({ ...good, cvv: null }, NOW, { requireCvv: false });
    expect(r.ok && r.value.cvv).toBe('');
    expect(validateCard({ ...good, cvv: '99' }, NOW, { requireCvv: false }).ok).toBe(false);
  });

  it('still checks the CVV format when the card number is bad', () => {
    const fields = errorsOf(validateCard({ ccNum: '1', expiry: '12/27', cvv: '12345' }, NOW)).map(
      (e) => e.field,
    );
    expect(fields).toEqual(['card.ccNum', 'card.cvv']);
  });
});

describe('validateCard: expiry', () => {
  it.each([
    ['12/27', '12/27'],
    ['1227', '12/27'],
    ['12/2027', '12/27'],
    ['12-27', '12/27'],
    ['12-2027', '12/27'],
    ['122027', '12/27'],
    ['1/27', '01/27'],
    [' 03 / 26 ', '03/26'],
  ])('accepts %j as %s', (expiry, normalised) => {
    const r = validateCard({ ...good, expiry }, NOW);
    expect(r.ok && r.value.expiry).toBe(normalised);
  });

  it('returns month and four-digit year', () => {
    expect(parseExpiry('07/29')).toEqual({ expiry: '07/29', month: 7, year: 2029 });
  });

  it.each(['13/27', '00/27', '1/2', '12/273', 'ab/cd', '12.27', '12/1999', ''])('rejects %j', (expiry) => {
    const errors = errorsOf(validateCard({ ...good, expiry }, NOW));
    expect(errors.map((e) => e.field)).toEqual(['card.expiry']);
  });

  it('accepts the current month and rejects the month before', () => {
    expect(validateCard({ ...good, expiry: '06/25' }, NOW).ok).toBe(true);
    expect(errorsOf(validateCard({ ...good, expiry: '05/25' }, NOW))).toEqual([
      { field: 'card.expiry', message: 'card expired (05/25)' },
    ]);
    expect(validateCard({ ...good, expiry: '12/24' }, NOW).ok).toBe(false);
  });

  it('keeps a card valid until its month has ended everywhere (UTC-12)', () => {
    const justAfterUtcMonthEnd = new Date('2025-07-01T05:00:00Z');
    expect(validateCard({ ...good, expiry: '06/25' }, justAfterUtcMonthEnd).ok).toBe(true);
    expect(validateCard({ ...good, expiry: '06/25' }, new Date('2025-07-01T13:00:00Z')).ok).toBe(false);
  });

  it('rejects dates more than 20 years ahead', () => {
    expect(validateCard({ ...good, expiry: '06/2045' }, NOW).ok).toBe(true);
    expect(validateCard({ ...good, expiry: '07/2045' }, NOW).ok).toBe(false);
  });
});

describe('validateCard: robustness', () => {
  it('reports every field at once', () => {
    expect(errorsOf(validateCard({}, NOW)).map((e) => e.field)).toEqual([
      'card.ccNum',
      'card.expiry',
      'card.cvv',
    ]);
  });

  it('does not throw on non-object or non-string input', () => {
    expect(validateCard(null as never, NOW).ok).toBe(false);
    expect(validateCard({ ccNum: 42 as never, expiry: {} as never, cvv: [] as never }, NOW).ok).toBe(false);
  });
});

describe('groupCardNumber', () => {
  it('groups as the brand prints it; keeps digits only, at most 19', () => {
    expect(groupCardNumber('4242424242424242')).toBe('4242 4242 4242 4242');
    expect(groupCardNumber('4242-4242 42')).toBe('4242 4242 42');
    expect(groupCardNumber('378282246310005')).toBe('3782 822463 10005');
    expect(groupCardNumber('4242 ')).toBe('4242');
    expect(groupCardNumber('12345678901234567890123').replace(/ /g, '')).toHaveLength(19);
    expect(groupCardNumber('abc')).toBe('');
  });
});
