/**
 * Money in the console: the server's integer minor units with an ISO currency, shown with
 * Intl.NumberFormat in the UI language; typed amounts (major units) parsed as decimal strings into
 * exact minor units, never through floating point (19.99 is 1999, not 1998.9999).
 */

export type UiLanguage = 'en' | 'he';

/** The locale of each UI language (Hebrew as written in Israel, English as in the US). */
export const LOCALES: Record<UiLanguage, string> = { en: 'en-US', he: 'he-IL' };

const digitsCache = new Map<string, number>();

/** How many minor digits a currency has (USD 2, ILS 2, JPY 0). */
export function minorDigits(currency: string): number {
  let d = digitsCache.get(currency);
  if (d === undefined) {
    try {
      d =
        new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions()
          .maximumFractionDigits ?? 2;
    } catch {
      d = 2;
    }
    digitsCache.set(currency, d);
  }
  return d;
}

/** `amountMinor` in `currency` shown in the UI language: 123456 USD → "$1,234.56" / "‏1,234.56 $". */
export function formatMinor(amountMinor: number, currency: string, lang: UiLanguage): string {
  const digits = minorDigits(currency);
  const negative = amountMinor < 0;
  const abs = Math.abs(amountMinor);
  // Exact: the integer part and the remainder are put together as a decimal string.
  const scale = 10 ** digits;
  const whole = Math.floor(abs / scale);
  const frac = abs % scale;
  const decimal = `${negative ? '-' : ''}${whole}${digits > 0 ? `.${String(frac).padStart(digits, '0')}` : ''}`;
  try {
    return new Intl.NumberFormat(LOCALES[lang], {
      style: 'currency',
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(decimal as unknown as number);
  } catch {
    return `${decimal} ${currency}`;
  }
}

/** A plain number in the UI language (counts). */
export function formatCount(n: number, lang: UiLanguage): string {
  return new Intl.NumberFormat(LOCALES[lang]).format(n);
}

export type ParseResult =
  | { ok: true; minor: number }
  | { ok: false; error: 'empty' | 'invalid' | 'tooManyDecimals' | 'tooLarge' };

/**
 * A typed amount in major units ("1,234.50", "18", "0.5", "١٨" is not accepted) → exact minor
 * units. Thousands separators (`,` or a space) are allowed between groups of three; one `.` is the
 * decimal point; at most the currency's minor digits after it.
 */
export function parseMajor(text: string, currency: string, maxMinor = Number.MAX_SAFE_INTEGER): ParseResult {
  const s = text.trim().replace(/[\u200e\u200f\u202a-\u202e]/g, '');
  if (s === '') return { ok: false, error: 'empty' };
  const m = /^(\d{1,3}(?:[, ]\d{3})+|\d+)?(?:\.(\d*))?$/.exec(s);
  if (!m || (m[1] === undefined && (m[2] === undefined || m[2] === '')))
    return { ok: false, error: 'invalid' };
  const wholeDigits = (m[1] ?? '0').replace(/[, ]/g, '');
  const fracDigits = m[2] ?? '';
  const digits = minorDigits(currency);
  if (fracDigits.length > digits) return { ok: false, error: 'tooManyDecimals' };
  const minorString = `${wholeDigits}${fracDigits.padEnd(digits, '0')}`.replace(/^0+(?=\d)/, '');
  if (minorString.length > 16) return { ok: false, error: 'tooLarge' };
  const minor = Number(minorString);
  if (!Number.isSafeInteger(minor) || minor > maxMinor) return { ok: false, error: 'tooLarge' };
  return { ok: true, minor };
}

/** Minor units as the major-unit string an input shows (1999 USD → "19.99"), exact. */
export function minorToInput(amountMinor: number, currency: string): string {
  const digits = minorDigits(currency);
  if (digits === 0) return String(amountMinor);
  const s = String(Math.abs(amountMinor)).padStart(digits + 1, '0');
  return `${amountMinor < 0 ? '-' : ''}${s.slice(0, -digits)}.${s.slice(-digits)}`;
}
