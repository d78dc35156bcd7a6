import { describe, expect, it } from 'vitest';
import { isValidAbaRouting, validateBankAccount } from './bank-account.ts';

describe('isValidAbaRouting', () => {
  it.each(['011000015', '021000021', '111000025', '026009593', '322271627'])('accepts %s', (routing) => {
    expect(isValidAbaRouting(routing)).toBe(true);
  });

  it('rejects every single-digit change of a valid number', () => {
    for (const valid of ['011000015', '021000021', '111000025']) {
      for (let i = 0; i < 9; i++) {
        for (let d = 0; d <= 9; d++) {
          const digit = String(d);
          if (valid[i] === digit) continue;
          const changed = valid.slice(0, i) + digit + valid.slice(i + 1);
          expect(isValidAbaRouting(changed), changed).toBe(false);
        }
      }
    }
  });

  it.each(['', '01100001', '0110000150', '01100001a', '011 000015', '000000000'])('rejects %j', (routing) => {
    expect(isValidAbaRouting(routing)).toBe(false);
  });

  it('rejects a good checksum with an unassigned prefix (13–20, 33–60, 73–79, 81–99)', () => {
    // 3·(1+0+0) + 7·(3+0+0) + (d3+d6+d9) = 24 + (0+0+6) = 30 → checksum ok, prefix 13 not assigned.
    expect(isValidAbaRouting('130000006')).toBe(false);
    expect(isValidAbaRouting('120000003')).toBe(true);
  });
});

describe('validateBankAccount', () => {
  const good = { routingNum: '011000015', accountNum: '000123456789' };

  it('accepts a valid account and applies defaults', () => {
    expect(validateBankAccount(good)).toEqual({
      ok: true,
      value: {
        routingNum: '011000015',
        accountNum: '000123456789',
        accountType: 'Checking',
        checkType: 'Personal',
        nameOnAccount: null,
        last4: '6789',
      },
    });
  });

  it.each([
    ['savings', 'Savings'],
    ['SAVINGS', 'Savings'],
    [' Checking ', 'Checking'],
    ['checking', 'Checking'],
    ['', 'Checking'],
    [null, 'Checking'],
  ])('normalises accountType %j to %s', (accountType, expected) => {
    const r = validateBankAccount({ ...good, accountType });
    expect(r.ok && r.value.accountType).toBe(expected);
  });

  it.each([
    ['business', 'Business'],
    ['PERSONAL', 'Personal'],
    [undefined, 'Personal'],
  ])('normalises checkType %j to %s', (checkType, expected) => {
    const r = validateBankAccount({ ...good, checkType });
    expect(r.ok && r.value.checkType).toBe(expected);
  });

  it('rejects unknown account and check types', () => {
    const r = validateBankAccount({ ...good, accountType: 'Money market', checkType: 'Corporate' });
    expect(r.ok ? [] : r.errors.map((e) => e.field)).toEqual([
      'bankAccount.accountType',
      'bankAccount.checkType',
    ]);
  });

  it('validates the routing number', () => {
    const fieldErr = (routingNum: string | null) => {
      const r = validateBankAccount({ ...good, routingNum });
      return r.ok ? null : r.errors;
    };
    expect(fieldErr(null)).toEqual([{ field: 'bankAccount.routingNum', message: 'is required' }]);
    expect(fieldErr('12345')).toEqual([{ field: 'bankAccount.routingNum', message: 'must be 9 digits' }]);
    expect(fieldErr('011000016')).toEqual([
      { field: 'bankAccount.routingNum', message: 'is not a valid ABA routing number' },
    ]);
    expect(fieldErr('0110-00015')).toBeNull();
  });

  it('validates the account number (4–17 digits)', () => {
    const ok = (accountNum: string) => validateBankAccount({ ...good, accountNum }).ok;
    expect(ok('1234')).toBe(true);
    expect(ok('12345678901234567')).toBe(true);
    expect(ok('123')).toBe(false);
    expect(ok('123456789012345678')).toBe(false);
    expect(ok('12a45')).toBe(false);
    expect(ok('')).toBe(false);
    const r = validateBankAccount({ ...good, accountNum: '123456789012345678' });
    expect(JSON.stringify(r)).not.toContain('123456789012345678');
  });

  it('accepts a name of up to 256 characters and trims it', () => {
    const r = validateBankAccount({ ...good, nameOnAccount: '  Chesed Fund  ' });
    expect(r.ok && r.value.nameOnAccount).toBe('Chesed Fund');
    expect(validateBankAccount({ ...good, nameOnAccount: 'x'.repeat(256) }).ok).toBe(true);
    const long = validateBankAccount({ ...good, nameOnAccount: 'x'.repeat(257) });
    expect(long.ok ? [] : long.errors.map((e) => e.field)).toEqual(['bankAccount.nameOnAccount']);
  });
});
