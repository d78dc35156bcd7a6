/**
 * A date chosen as day, month and year in the interface's language and order (`25 בנובמבר 2026`
 * in Hebrew, `November 25, 2026` in English), not the browser's date picker, which follows the
 * browser's own locale (MM/DD/YYYY in a Hebrew interface). Value: `YYYY-MM-DD`, or '' while unset.
 */
import { useTranslation } from 'react-i18next';

const pad = (n: number) => String(n).padStart(2, '0');
const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

export function monthNames(lang: string): string[] {
  const f = new Intl.DateTimeFormat(lang === 'he' ? 'he-IL' : 'en-US', { month: 'long', timeZone: 'UTC' });
  return Array.from({ length: 12 }, (_, i) => f.format(new Date(Date.UTC(2000, i, 1))));
}

export function DateSelect({
  value,
  onChange,
  testId,
  fromYear,
  years = 11,
  invalid,
  describedBy,
}: {
  value: string;
  onChange(value: string): void;
  testId: string;
  fromYear: number;
  years?: number;
  invalid?: boolean;
  describedBy?: string;
}) {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  const y = m ? Number(m[1]) : null;
  const mo = m ? Number(m[2]) : null;
  const d = m ? Number(m[3]) : null;
  const set = (ny: number | null, nm: number | null, nd: number | null) => {
    const year = ny ?? y ?? fromYear;
    const month = nm ?? mo ?? 1;
    const day = Math.min(nd ?? d ?? 1, daysIn(year, month));
    onChange(`${year}-${pad(month)}-${pad(day)}`);
  };
  const firstYear = Math.min(fromYear, y ?? fromYear);
  const yearList = Array.from({ length: years + (fromYear - firstYear) }, (_, i) => firstYear + i);
  const common = { 'aria-invalid': invalid || undefined, 'aria-describedby': describedBy };
  const day = (
    <select
      key="day"
      value={d ?? ''}
      aria-label={t('date.day')}
      data-testid={`${testId}-day`}
      onChange={(e) => set(null, null, Number(e.target.value))}
      {...common}
    >
      {d === null ? <option value="">{t('date.day')}</option> : null}
      {Array.from({ length: daysIn(y ?? fromYear, mo ?? 1) }, (_, i) => i + 1).map((n) => (
        <option key={n} value={n}>
          {n}
        </option>
      ))}
    </select>
  );
  const month = (
    <select
      key="month"
      value={mo ?? ''}
      aria-label={t('date.month')}
      data-testid={`${testId}-month`}
      onChange={(e) => set(null, Number(e.target.value), null)}
      {...common}
    >
      {mo === null ? <option value="">{t('date.month')}</option> : null}
      {monthNames(lang).map((name, i) => (
        <option key={name} value={i + 1}>
          {name}
        </option>
      ))}
    </select>
  );
  const year = (
    <select
      key="year"
      value={y ?? ''}
      aria-label={t('date.year')}
      data-testid={`${testId}-year`}
      onChange={(e) => set(Number(e.target.value), null, null)}
      {...common}
    >
      {y === null ? <option value="">{t('date.year')}</option> : null}
      {yearList.map((n) => (
        <option key={n} value={n}>
          {n}
        </option>
      ))}
    </select>
  );
  return (
    <span className="date-select" data-testid={testId} data-value={value}>
      {lang === 'he' ? [day, month, year] : [month, day, year]}
    </span>
  );
}
