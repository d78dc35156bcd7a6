/** Money, numbers and dates through Intl, in the current language. */
import type { Currency } from '@kupah/contracts';
import { hebrewDateOf } from '@kupah/schedule';

const locale = (lang: string) => (lang === 'he' ? 'he-IL' : 'en-US');

export function money(minor: number, currency: Currency | string, lang: string): string {
  return new Intl.NumberFormat(locale(lang), { style: 'currency', currency }).format(minor / 100);
}

export function dateTime(iso: string, lang: string): string {
  return new Intl.DateTimeFormat(locale(lang), { dateStyle: 'medium', timeStyle: 'short' }).format(
    new Date(iso),
  );
}

/** A civil date `YYYY-MM-DD`, shown as the calendar day it names (never shifted by a time zone). */
export function civilDate(ymd: string, lang: string): string {
  const [y, m, d] = ymd.split('-').map(Number) as [number, number, number];
  return new Intl.DateTimeFormat(locale(lang), { dateStyle: 'medium', timeZone: 'UTC' }).format(
    new Date(Date.UTC(y, m - 1, d)),
  );
}

export function hebrewDate(ymd: string, lang: string): string {
  const h = hebrewDateOf(ymd);
  return lang === 'he' ? h.he : h.en;
}

/** Today's civil date in a time zone. */
export function todayIn(timeZone: string, at = new Date()): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(at);
}
