import type { CharityProvider, Result } from './methods.ts';
import { CHARITY_PROVIDERS, isCharityProvider, stripSeparators, text } from './methods.ts';

export interface ValidCharityCard {
  provider: CharityProvider;
  /** Digits only for a card number; the token as given for a token. */
  number: string;
  isToken: boolean;
  last4: string;
  /** The provider name. */
  brand: string;
}

/** A provider token (what a provider's hosted field returns in place of the card number). */
export const CHARITY_TOKEN_PATTERN = /^tok_[A-Za-z0-9_-]{8,64}$/;

/** True when `value` has the form of a provider token (`tok_` + 8–64 of `A–Z a–z 0–9 _ -`). */
export function isCharityToken(value: string): boolean {
  return typeof value === 'string' && CHARITY_TOKEN_PATTERN.test(value);
}

/**
 * Validates the number of a charity card backed by one of the four providers: either a card number
 * of 8–19 digits (spaces/dashes allowed and stripped; no Luhn check, the providers differ) or a
 * provider token (`tok_…`). Errors are on `card.ccNum` and never contain the number.
 */
export function validateCharityCard(
  provider: CharityProvider,
  ccNum: string | null | undefined,
): Result<ValidCharityCard> {
  if (!isCharityProvider(provider)) {
    return {
      ok: false,
      errors: [{ field: 'method', message: `must be one of ${CHARITY_PROVIDERS.join(', ')}` }],
    };
  }
  const value = text(ccNum);
  if (value === '') return { ok: false, errors: [{ field: 'card.ccNum', message: 'is required' }] };
  if (value.startsWith('tok_')) {
    if (!isCharityToken(value)) {
      return {
        ok: false,
        errors: [
          {
            field: 'card.ccNum',
            message: 'must be a token tok_ followed by 8 to 64 letters, digits, _ or -',
          },
        ],
      };
    }
    return {
      ok: true,
      value: { provider, number: value, isToken: true, last4: value.slice(-4), brand: provider },
    };
  }
  const digits = stripSeparators(value);
  if (!/^\d{8,19}$/.test(digits)) {
    return {
      ok: false,
      errors: [
        { field: 'card.ccNum', message: 'must be a charity card number of 8 to 19 digits or a tok_ token' },
      ],
    };
  }
  return {
    ok: true,
    value: { provider, number: digits, isToken: false, last4: digits.slice(-4), brand: provider },
  };
}
