import cardValidator from 'card-validator';
import type { FieldError, Result } from './methods.ts';
import { stripSeparators, text } from './methods.ts';

export interface CardInput {
  ccNum?: string | null;
  expiry?: string | null;
  cvv?: string | null;
}

export interface ValidCard {
  /** Digits only. */
  pan: string;
  /** Human brand name, e.g. `Visa`, `American Express`. */
  brand: string;
  last4: string;
  /** `MM/YY`. */
  expiry: string;
  expMonth: number;
  /** Four-digit year. */
  expYear: number;
  /** Digits only; '' when not required and not given. */
  cvv: string;
}

export interface ValidateCardOptions {
  /** Default true. When false an empty CVV is accepted; a CVV that is given must still be valid. */
  requireCvv?: boolean;
}

/** card-validator's (credit-card-type's) `type` → the brand name we show and store. */
const BRAND_NAMES: Readonly<Record<string, string>> = {
  visa: 'Visa',
  mastercard: 'Mastercard',
  'american-express': 'American Express',
  discover: 'Discover',
  'diners-club': 'Diners Club',
  jcb: 'JCB',
  unionpay: 'UnionPay',
  maestro: 'Maestro',
  elo: 'Elo',
  mir: 'Mir',
  hiper: 'Hiper',
  hipercard: 'Hipercard',
  troy: 'Troy',
  naranja: 'Naranja',
  verve: 'Verve',
};

/** Expiry dates further ahead than this many years are rejected as typos. */
const MAX_YEARS_AHEAD = 20;

/**
 * Brand name for a card number (spaces/dashes allowed), or null when card-validator cannot
 * single out one brand. Does not check length or Luhn.
 */
export function detectBrand(ccNum: string): string | null {
  if (typeof ccNum !== 'string') return null;
  const digits = stripSeparators(ccNum);
  if (!/^\d+$/.test(digits)) return null;
  const card = cardValidator.number(digits).card;
  return card ? (BRAND_NAMES[card.type] ?? card.niceType) : null;
}

/**
 * A card number as the cashier should read it while typing: digits only (at most 19), grouped as
 * the brand prints them (4-4-4-4, American Express 4-6-5; card-validator's gaps).
 */
export function groupCardNumber(typed: string): string {
  const digits = typed.replace(/\D/g, '').slice(0, 19);
  const gaps = cardValidator.number(digits).card?.gaps ?? [4, 8, 12, 16];
  let out = '';
  for (let i = 0; i < digits.length; i++) {
    if (gaps.includes(i)) out += ' ';
    out += digits[i];
  }
  return out;
}

type CardNumberCheck =
  | { ok: true; pan: string; brand: string; cvvSize: number }
  | { ok: false; message: string };

function checkCardNumber(raw: unknown): CardNumberCheck {
  const value = text(raw);
  if (value === '') return { ok: false, message: 'is required' };
  const pan = stripSeparators(value);
  if (!/^\d+$/.test(pan)) return { ok: false, message: 'must contain only digits, spaces and dashes' };
  if (pan.length < 12 || pan.length > 19) return { ok: false, message: 'must be 12 to 19 digits long' };
  const verdict = cardValidator.number(pan);
  const card = verdict.card;
  if (!card) {
    return verdict.isPotentiallyValid
      ? { ok: false, message: 'is incomplete or of an unrecognised card brand' }
      : { ok: false, message: 'is not of a recognised card brand' };
  }
  const brand = BRAND_NAMES[card.type] ?? card.niceType;
  if (!card.lengths.includes(pan.length)) {
    return { ok: false, message: `has the wrong number of digits for ${brand} cards` };
  }
  if (!verdict.isValid) return { ok: false, message: 'is not a valid card number (check digit mismatch)' };
  return { ok: true, pan, brand, cvvSize: card.code.size };
}

export interface ParsedExpiry {
  /** `MM/YY`. */
  expiry: string;
  month: number;
  /** Four-digit year. */
  year: number;
}

/**
 * Parses a card expiry date. Accepted: `MM/YY` (the interface's form), `MM-YY`, `MM/YYYY`,
 * `MM-YYYY`, `MMYY`, `MMYYYY`; a one-digit month is accepted when a separator is used (`1/27`);
 * spaces around the separator are ignored. Two-digit years are 20YY. Null when not a date.
 */
export function parseExpiry(raw: string): ParsedExpiry | null {
  if (typeof raw !== 'string') return null;
  const value = raw.trim();
  const m = /^(\d{1,2})\s*[/-]\s*(\d{2}|\d{4})$/.exec(value) ?? /^(\d{2})(\d{2}|\d{4})$/.exec(value);
  if (!m) return null;
  const month = Number(m[1]);
  const yearText = m[2] ?? '';
  const year = yearText.length === 2 ? 2000 + Number(yearText) : Number(yearText);
  if (month < 1 || month > 12 || year < 2000) return null;
  return { expiry: `${String(month).padStart(2, '0')}/${String(year % 100).padStart(2, '0')}`, month, year };
}

/**
 * The calendar month that `now` still is somewhere on Earth (UTC−12), as year × 12 + month−1.
 * A card is good through the last day of its expiry month, so we only call it expired once that
 * month is over everywhere; the gateway makes the final decision.
 */
function latestOngoingMonthIndex(now: Date): number {
  const t = now.getTime() - 12 * 60 * 60 * 1000;
  const d = new Date(Number.isFinite(t) ? t : Date.now());
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
}

function checkExpiry(
  raw: unknown,
  now: Date,
): { ok: true; value: ParsedExpiry } | { ok: false; message: string } {
  const value = text(raw);
  if (value === '') return { ok: false, message: 'is required' };
  const parsed = parseExpiry(value);
  if (!parsed) return { ok: false, message: 'must be a date MM/YY' };
  const expIndex = parsed.year * 12 + (parsed.month - 1);
  const nowIndex = latestOngoingMonthIndex(now);
  if (expIndex < nowIndex) return { ok: false, message: `card expired (${parsed.expiry})` };
  if (expIndex > nowIndex + MAX_YEARS_AHEAD * 12) {
    return { ok: false, message: `must be within ${MAX_YEARS_AHEAD} years from now` };
  }
  return { ok: true, value: parsed };
}

/**
 * Validates a credit card entered on the terminal or posted to the API. Card number: digits with
 * optional spaces/dashes, a brand card-validator recognises, a length valid for that brand and a
 * good Luhn check digit (card-validator skips Luhn for UnionPay, as those need not have one).
 * Expiry: see `parseExpiry`; an expired card is an error (relative to `now`). CVV: 4 digits for
 * American Express, 3 for other brands. Error messages never contain the card number.
 */
export function validateCard(input: CardInput, now: Date, opts?: ValidateCardOptions): Result<ValidCard> {
  const source: CardInput = input !== null && typeof input === 'object' ? input : {};
  const errors: FieldError[] = [];

  const number = checkCardNumber(source.ccNum);
  if (!number.ok) errors.push({ field: 'card.ccNum', message: number.message });

  const expiry = checkExpiry(source.expiry, now);
  if (!expiry.ok) errors.push({ field: 'card.expiry', message: expiry.message });

  const cvv = text(source.cvv);
  const requireCvv = opts?.requireCvv ?? true;
  if (cvv === '') {
    if (requireCvv) errors.push({ field: 'card.cvv', message: 'is required' });
  } else if (number.ok) {
    if (!cardValidator.cvv(cvv, number.cvvSize).isValid) {
      errors.push({
        field: 'card.cvv',
        message: `must be ${number.cvvSize} digits for ${number.brand} cards`,
      });
    }
  } else if (!cardValidator.cvv(cvv, [3, 4]).isValid) {
    errors.push({ field: 'card.cvv', message: 'must be 3 or 4 digits' });
  }

  if (errors.length > 0 || !number.ok || !expiry.ok) return { ok: false, errors };
  return {
    ok: true,
    value: {
      pan: number.pan,
      brand: number.brand,
      last4: number.pan.slice(-4),
      expiry: expiry.value.expiry,
      expMonth: expiry.value.month,
      expYear: expiry.value.year,
      cvv,
    },
  };
}
