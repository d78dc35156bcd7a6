/** Money, numbers and dates through Intl, in the current language; Hebrew dates from the engine. */
import type { Currency } from '@kupah/contracts';
import { hebrewDateOf } from '@kupah/schedule';

const locale = (lang: string) => (lang === 'he' ? 'he-IL' : 'en-US');

const cache = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat | Intl.RelativeTimeFormat>();
function cached<T extends Intl.NumberFormat | Intl.DateTimeFormat | Intl.RelativeTimeFormat>(
  key: string,
  make: () => T,
): T {
  let f = cache.get(key) as T | undefined;
  if (!f) {
    f = make();
    cache.set(key, f);
  }
  return f;
}

/** Minor units as money: `money(1800, 'USD', 'en')` → `$18.00`; in Hebrew `‏18.00 $`. */
export function money(minor: number, currency: Currency | string, lang: string): string {
  return cached(
    `m|${lang}|${currency}`,
    () => new Intl.NumberFormat(locale(lang), { style: 'currency', currency }),
  ).format(minor / 100);
}

/** Totals per currency (`$36.00 + ‏₪50.00`); `zero` when there is nothing. */
export function moneyTotals(totals: Partial<Record<Currency, number>>, lang: string, zero = '0'): string {
  const parts = Object.entries(totals)
    .filter(([, v]) => (v ?? 0) > 0)
    .map(([c, v]) => money(v ?? 0, c, lang));
  return parts.length ? parts.join(' + ') : zero;
}

export function number(n: number, lang: string): string {
  return cached(`n|${lang}`, () => new Intl.NumberFormat(locale(lang))).format(n);
}

export function dateTime(iso: string, lang: string): string {
  return cached(
    `dt|${lang}`,
    () => new Intl.DateTimeFormat(locale(lang), { dateStyle: 'medium', timeStyle: 'short' }),
  ).format(new Date(iso));
}

export function timeOfDay(iso: string, lang: string): string {
  return cached(`t|${lang}`, () => new Intl.DateTimeFormat(locale(lang), { timeStyle: 'short' })).format(
    new Date(iso),
  );
}

/** A civil date `YYYY-MM-DD`, shown as the calendar day it names (never shifted by a time zone). */
export function civilDate(ymd: string, lang: string): string {
  const [y, m, d] = ymd.split('-').map(Number) as [number, number, number];
  return cached(
    `cd|${lang}`,
    () =>
      new Intl.DateTimeFormat(locale(lang), {
        weekday: 'short',
        year: 'numeric',
        month: 'short',
        day: 'numeric',
        timeZone: 'UTC',
      }),
  ).format(new Date(Date.UTC(y, m - 1, d)));
}

/** Hebrew vowel points and cantillation marks (the engine's Hebrew month names carry them). */
const NIQQUD = /[\u0591-\u05BD\u05BF\u05C1\u05C2\u05C4\u05C5\u05C7]/g;

/**
 * The Hebrew date as a reader expects it: `ט״ו בשבט תשפ״ז` (day, ב + month, year in letters,
 * no vowel points) in Hebrew; `15 Sh'vat 5787` in English.
 */
export function hebrewDateText(engine: { en: string; he: string }, lang: string): string {
  if (lang !== 'he') return engine.en;
  const words = engine.he.replace(NIQQUD, '').trim().split(/\s+/);
  if (words.length < 3) return words.join(' ');
  const day = words[0];
  const year = words[words.length - 1];
  const month = words.slice(1, -1).join(' ');
  return `${day} ב${month} ${year}`;
}

/** The Hebrew date of a civil date `YYYY-MM-DD` (see `hebrewDateText`). */
export function hebrewDate(ymd: string, lang: string): string {
  return hebrewDateText(hebrewDateOf(ymd), lang);
}

/** Today's civil date `YYYY-MM-DD` in a time zone. */
export function todayIn(timeZone: string, at = new Date()): string {
  try {
    return cached(
      `today|${timeZone}`,
      () => new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }),
    ).format(at);
  } catch {
    // An unknown zone name: the machine's own.
    return new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
  }
}

/** Time until (or since) `iso`, e.g. "in 5 hours" / "בעוד 5 שעות", "2 hours ago". */
export function timeLeft(iso: string, lang: string, now = Date.now()): string {
  const ms = Date.parse(iso) - now;
  const abs = Math.abs(ms);
  const rtf = cached(`rt|${lang}`, () => new Intl.RelativeTimeFormat(locale(lang), { numeric: 'always' }));
  if (abs >= 48 * 3_600_000) return rtf.format(Math.trunc(ms / 86_400_000), 'day');
  if (abs >= 3_600_000) return rtf.format(Math.trunc(ms / 3_600_000), 'hour');
  return rtf.format(Math.trunc(ms / 60_000), 'minute');
}
