import { describe, expect, it } from 'vitest';
import { validateCharityCard } from './charity-card.ts';
import { CHARITY_PROVIDERS } from './methods.ts';

describe('validateCharityCard', () => {
  it.each(CHARITY_PROVIDERS)('accepts a card number for %s (no Luhn check)', (provider) => {
    expect(validateCharityCard(provider, '6001 0000-0000 0002')).toEqual({
      ok: true,
      value: { provider, number: '6001000000000002', isToken: false, last4: '0002', brand: provider },
    });
  });

  it('accepts 8 to 19 digits', () => {
    expect(validateCharityCard('Provider_1', '12345678').ok).toBe(true);
    expect(validateCharityCard('Provider_1', '1234567890123456789').ok).toBe(true);
    expect(validateCharityCard('Provider_1', '1234567').ok).toBe(false);
    expect(validateCharityCard('Provider_1', '12345678901234567890').ok).toBe(false);
    expect(validateCharityCard('Provider_1', '1234567a').ok).toBe(false);
  });

  it('accepts provider tokens', () => {
    expect(validateCharityCard('Provider_3', 'tok_AbC-123_xyz')).toEqual({
      ok: true,
      value: {
        provider: 'Provider_3',
        number: 'tok_AbC-123_xyz',
        isToken: true,
        last4: '_xyz',
        brand: 'Provider_3',
      },
    });
    expect(validateCharityCard('Provider_2', `tok_${'a'.repeat(64)}`).ok).toBe(true);
  });

  it.each(['tok_short', 'tok_', `tok_${'a'.repeat(65)}`, 'tok_has space!', 'TOK_abcdefgh'])(
    'rejects %j',
    (value) => {
      const r = validateCharityCard('Provider_4', value);
      expect(r.ok ? [] : r.errors.map((e) => e.field)).toEqual(['card.ccNum']);
    },
  );

  it('requires a value and never echoes it', () => {
    expect(validateCharityCard('Provider_1', null)).toEqual({
      ok: false,
      errors: [{ field: 'card.ccNum', message: 'is required' }],
    });
    expect(validateCharityCard('Provider_1', undefined).ok).toBe(false);
    expect(JSON.stringify(validateCharityCard('Provider_1', '12345678901234567890'))).not.toContain(
      '1234567890',
    );
  });

  it('rejects an unknown provider', () => {
    const r = validateCharityCard('Provider_9' as never, '6001000000000001');
    expect(r.ok ? [] : r.errors.map((e) => e.field)).toEqual(['method']);
  });
});
