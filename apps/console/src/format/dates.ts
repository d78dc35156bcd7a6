/** Dates and times in the organisation's time zone, written in the UI language. */
import { LOCALES, type UiLanguage } from './money.ts';

function valid(iso: string | null | undefined): Date | null {
  if (!iso) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

function safeZone(timeZone: string | undefined): string | undefined {
  if (!timeZone) return undefined;
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return timeZone;
  } catch {
    return undefined;
  }
}

export function formatDateTime(iso: string | null | undefined, lang: UiLanguage, timeZone?: string): string {
  const d = valid(iso);
  if (!d) return iso ?? '';
  return new Intl.DateTimeFormat(LOCALES[lang], {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: safeZone(timeZone),
  }).format(d);
}

export function formatDate(iso: string | null | undefined, lang: UiLanguage, timeZone?: string): string {
  // A plain civil date (2026-11-26) is a day, not an instant: shown as is in any zone.
  if (iso && /^\d{4}-\d{2}-\d{2}$/.test(iso)) {
    return new Intl.DateTimeFormat(LOCALES[lang], { dateStyle: 'medium', timeZone: 'UTC' }).format(
      new Date(`${iso}T00:00:00Z`),
    );
  }
  const d = valid(iso);
  if (!d) return iso ?? '';
  return new Intl.DateTimeFormat(LOCALES[lang], { dateStyle: 'medium', timeZone: safeZone(timeZone) }).format(
    d,
  );
}

/** The label of a chart point: the hour (today) or the day. */
export function formatBucket(iso: string, unit: 'hour' | 'day', lang: UiLanguage, timeZone?: string): string {
  const d = valid(iso);
  if (!d) return iso;
  return new Intl.DateTimeFormat(
    LOCALES[lang],
    unit === 'hour'
      ? { hour: '2-digit', minute: '2-digit', timeZone: safeZone(timeZone) }
      : { month: 'short', day: 'numeric', timeZone: safeZone(timeZone) },
  ).format(d);
}
