/**
 * Civil (proleptic Gregorian) dates as plain day numbers.
 *
 * The engine never touches `Date` for calendar arithmetic: a civil date `YYYY-MM-DD` is turned into
 * its R.D. ("Rata Die") day number, the count @hebcal/core also uses (R.D. 1 = Monday 1 January of
 * year 1), with integer arithmetic only. So no time zone, daylight-saving change or local midnight
 * can shift a date by one.
 */

/** R.D. of 1970-01-01. */
export const RD_UNIX_EPOCH = 719_163;

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Days in a Gregorian month (1–12). */
export function daysInCivilMonth(year: number, month: number): number {
  if (month === 2) return isCivilLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

export function isCivilLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** R.D. day number of a civil date (days-from-civil, after H. Hinnant's public-domain algorithm). */
export function rdFromYmd(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468 + RD_UNIX_EPOCH;
}

export interface Ymd {
  year: number;
  month: number;
  day: number;
}

/** Civil date of an R.D. day number. */
export function ymdFromRd(rd: number): Ymd {
  const z = rd - RD_UNIX_EPOCH + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return { year, month, day };
}

/** `YYYY-MM-DD` → R.D., or `null` when the text is not a real date of years 1000–9999. */
export function parseCivilDate(text: string): number | null {
  const m = DATE_RE.exec(text);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > daysInCivilMonth(year, month)) return null;
  return rdFromYmd(year, month, day);
}

/** Like {@link parseCivilDate} but throws a RangeError naming the bad text. */
export function civilToRd(text: string): number {
  const rd = parseCivilDate(text);
  if (rd === null) throw new RangeError(`not a civil date YYYY-MM-DD: ${JSON.stringify(text)}`);
  return rd;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** R.D. → `YYYY-MM-DD`. */
export function rdToCivil(rd: number): string {
  const { year, month, day } = ymdFromRd(rd);
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}`;
}

/** Day of the week of an R.D. day: 0 = Sunday … 5 = Friday, 6 = Saturday (the same as hebcal's). */
export function weekdayOfRd(rd: number): number {
  return ((rd % 7) + 7) % 7;
}

/**
 * The civil date `months` months after (year, month) on the ORIGINAL day `day`, clamped to the
 * month's last day (31 Jan + 1 month → 28/29 Feb; + 2 months → 31 Mar: it never drifts).
 */
export function addCivilMonths(year: number, month: number, day: number, months: number): number {
  const index = year * 12 + (month - 1) + months;
  const y = Math.floor(index / 12);
  const m = index - y * 12 + 1;
  return rdFromYmd(y, m, Math.min(day, daysInCivilMonth(y, m)));
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    // Throws a RangeError for an unknown zone, which is what a caller should see.
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      calendar: 'gregory',
      numberingSystem: 'latn',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/**
 * The civil date (`YYYY-MM-DD`) of an instant in an IANA time zone, e.g. the org's "today".
 * Uses Intl's zone data, never `toISOString()` (which is the UTC date, a day off for half the world).
 */
export function civilDateIn(instant: Date, timeZone: string): string {
  const t = instant.getTime();
  if (!Number.isFinite(t)) throw new RangeError('civilDateIn: invalid Date');
  let year = 0;
  let month = 0;
  let day = 0;
  let bc = false;
  for (const part of formatterFor(timeZone).formatToParts(instant)) {
    if (part.type === 'year') year = Number(part.value);
    else if (part.type === 'month') month = Number(part.value);
    else if (part.type === 'day') day = Number(part.value);
    else if (part.type === 'era') bc = part.value.startsWith('B');
  }
  if (bc || year < 1 || year > 9999) throw new RangeError('civilDateIn: year outside 0001–9999');
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}`;
}
