import { describe, expect, it } from 'vitest';
import { isValidAbaRouting, validateBankAccount } from './bank-account.ts';
import { validateCard } from './card.ts';
import { validateCharityCard } from './charity-card.ts';
import { CHARITY_PROVIDERS, isCharityProvider } from './methods.ts';
import { SANDBOX_INSTRUMENTS, sandboxOutcome } from './sandbox.ts';

const NOW = new Date('2025-06-15T12:00:00Z');

describe('SANDBOX_INSTRUMENTS', () => {
  it.each(SANDBOX_INSTRUMENTS.map((row) => [row.method, row.number, row.outcome, row] as const))(
    '%s %s → %s',
    (method, number, outcome, row) => {
      if (method === 'Credit_Card') {
        expect(sandboxOutcome(method, { ccNum: number })).toBe(outcome);
        const cvv = number.startsWith('37') ? '1234' : '123';
        expect(validateCard({ ccNum: number, expiry: '12/30', cvv }, NOW).ok).toBe(true);
      } else if (method === 'ACH') {
        expect(sandboxOutcome(method, { accountNum: number })).toBe(outcome);
        expect(validateBankAccount({ routingNum: row.routingNum, accountNum: number }).ok).toBe(true);
      } else {
        expect(sandboxOutcome(method, { ccNum: number })).toBe(outcome);
        expect(isCharityProvider(method) && validateCharityCard(method, number).ok).toBe(true);
      }
    },
  );

  it('lists the named instruments', () => {
    const cards = SANDBOX_INSTRUMENTS.filter((r) => r.method === 'Credit_Card').map((r) => [
      r.number,
      r.outcome,
    ]);
    expect(cards).toEqual([
      ['4242424242424242', 'Success'],
      ['4111111111111111', 'Success'],
      ['5555555555554444', 'Success'],
      ['378282246310005', 'Success'],
      ['4000000000000002', 'Declined'],
      ['4000000000000119', 'Error'],
    ]);
    const routings = SANDBOX_INSTRUMENTS.filter((r) => r.method === 'ACH').map((r) => r.routingNum);
    expect(routings).toContain('011000015');
    expect(routings).toContain('021000021');
    expect(routings.every((r) => r !== undefined && isValidAbaRouting(r))).toBe(true);
    for (const provider of CHARITY_PROVIDERS) {
      const rows = SANDBOX_INSTRUMENTS.filter((r) => r.method === provider && /^\d{16}$/.test(r.number));
      expect(rows.map((r) => r.outcome)).toEqual(['Success', 'Declined', 'Error']);
    }
    const charityPrefixes = new Set(
      SANDBOX_INSTRUMENTS.filter((r) => isCharityProvider(r.method) && !r.number.startsWith('tok_')).map(
        (r) => r.number.slice(0, 4),
      ),
    );
    expect(charityPrefixes.size).toBe(4);
  });

  it('is frozen', () => {
    expect(Object.isFrozen(SANDBOX_INSTRUMENTS)).toBe(true);
    expect(Object.isFrozen(SANDBOX_INSTRUMENTS[0])).toBe(true);
  });
});

describe('sandboxOutcome rules for unlisted instruments', () => {
  it('any other valid credit card succeeds; spaces are ignored', () => {
    expect(sandboxOutcome('Credit_Card', { ccNum: '6011111111111117' })).toBe('Success');
    expect(sandboxOutcome('Credit_Card', { ccNum: '4000 0000 0000 0002' })).toBe('Declined');
    expect(sandboxOutcome('Credit_Card', { ccNum: '4000-0000-0000-0119' })).toBe('Error');
  });

  it('ACH outcome depends on the last four digits of the account number', () => {
    expect(sandboxOutcome('ACH', { accountNum: '987650002' })).toBe('Declined');
    expect(sandboxOutcome('ACH', { accountNum: '0119' })).toBe('Error');
    expect(sandboxOutcome('ACH', { accountNum: '98765001' })).toBe('Success');
    expect(sandboxOutcome('ACH', { accountNum: '00020001' })).toBe('Success');
  });

  it('charity numbers are per provider; unknown numbers succeed', () => {
    expect(sandboxOutcome('Provider_1', { ccNum: '6001000000000002' })).toBe('Declined');
    expect(sandboxOutcome('Provider_2', { ccNum: '6002000000000002' })).toBe('Declined');
    expect(sandboxOutcome('Provider_3', { ccNum: '6003000000000119' })).toBe('Error');
    expect(sandboxOutcome('Provider_2', { ccNum: '6001000000000002' })).toBe('Success');
    expect(sandboxOutcome('Provider_4', { ccNum: '12345678' })).toBe('Success');
  });

  it('charity tokens succeed unless they end in _declined', () => {
    for (const provider of CHARITY_PROVIDERS) {
      expect(sandboxOutcome(provider, { ccNum: 'tok_anything_here' })).toBe('Success');
      expect(sandboxOutcome(provider, { ccNum: 'tok_abc123_declined' })).toBe('Declined');
      expect(sandboxOutcome(provider, { ccNum: 'tok_declined_not_at_end' })).toBe('Success');
    }
  });

  it('an unknown method is an error', () => {
    expect(sandboxOutcome('Cash' as never, { ccNum: '4242424242424242' })).toBe('Error');
  });
});
