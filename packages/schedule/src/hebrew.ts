/**
 * The Hebrew-calendar side of the engine, on top of @hebcal/core. Every Hebrew date is turned into an
 * R.D. day number (see civil.ts) with `HDate#abs()` / `HDate.hebrew2abs`, never through a `Date`.
 *
 * Results that depend only on a day or a Hebrew year are memoised (deterministic, bounded).
 */
import { flags, HDate, HebrewCalendar } from '@hebcal/core';
import { civilToRd, rdToCivil, weekdayOfRd } from './civil.ts';

/** hebcal's month numbers (Nisan = 1 … Elul = 6, Tishrei = 7 … Adar I = 12, Adar II = 13). */
export const HM = {
  NISAN: 1,
  IYYAR: 2,
  SIVAN: 3,
  TAMUZ: 4,
  AV: 5,
  ELUL: 6,
  TISHREI: 7,
  CHESHVAN: 8,
  KISLEV: 9,
  TEVET: 10,
  SHVAT: 11,
  ADAR_I: 12,
  ADAR_II: 13,
} as const;

const CACHE_LIMIT = 100_000;

/** A small memo that forgets everything when it grows past its limit (the working set is small). */
class Memo<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly limit: number) {}
  get(key: K, make: (key: K) => V): V {
    let v = this.map.get(key);
    if (v === undefined) {
      if (this.map.size >= this.limit) this.map.clear();
      v = make(key);
      this.map.set(key, v);
    }
    return v;
  }
}

export interface DayInfo {
  /** `YYYY-MM-DD` */
  civil: string;
  /** e.g. `15 Tishrei 5787` (HDate#toString: untranslated, stable across releases) */
  en: string;
  /** e.g. `ט״ו תִּשְׁרֵי תשפ״ז` (HDate#renderGematriya) */
  he: string;
}

const dayInfo = new Memo<number, DayInfo>(CACHE_LIMIT);

/** The civil and Hebrew renderings of an R.D. day. */
export function dayInfoOf(rd: number): DayInfo {
  return dayInfo.get(rd, () => {
    const hd = new HDate(rd);
    return { civil: rdToCivil(rd), en: hd.toString(), he: hd.renderGematriya() };
  });
}

/** Hebrew year → R.D. days of Yom Tov (hebcal's CHAG flag), per Israel / diaspora schedule. */
const yomTovYears = new Memo<number, { il: ReadonlySet<number>; diaspora: ReadonlySet<number> }>(1000);

function yomTovDays(hyear: number, il: boolean): ReadonlySet<number> {
  const sets = yomTovYears.get(hyear, (y) => {
    const pick = (isIl: boolean) =>
      new Set(
        HebrewCalendar.getHolidaysForYearArray(y, isIl)
          .filter((ev) => (ev.getFlags() & flags.CHAG) !== 0)
          .map((ev) => ev.getDate().abs()),
      );
    return { il: pick(true), diaspora: pick(false) };
  });
  return il ? sets.il : sets.diaspora;
}

/** R.D. → Hebrew year (memoised: HDate conversion is the costly part of a day check). */
const hebrewYears = new Memo<number, number>(CACHE_LIMIT);

export function hebrewYearOfRd(rd: number): number {
  return hebrewYears.get(rd, () => new HDate(rd).getFullYear());
}

/** Shabbat, or Yom Tov: a day hebcal flags CHAG, observed in Israel when `il`, else in the diaspora. */
export function isShabbatOrYomTovRd(rd: number, il: boolean): boolean {
  if (weekdayOfRd(rd) === 6) return true;
  return yomTovDays(hebrewYearOfRd(rd), il).has(rd);
}

/** The nearest day on or before `rd` that is neither Shabbat nor Yom Tov. */
export function permittedOnOrBefore(rd: number, il: boolean): number {
  let d = rd;
  while (isShabbatOrYomTovRd(d, il)) d--;
  return d;
}

// --------------------------------------------------------------------------------------------
// Hebrew months in order

/** Position of month `m` in Hebrew year `y` counted from Tishrei (0) to Elul (11 or 12). */
export function tishreiIndex(y: number, m: number): number {
  if (m >= HM.TISHREI) return m - HM.TISHREI;
  return HDate.isLeapYear(y) ? m + 6 : m + 5;
}

/** hebcal month number of the month at Tishrei-based position `index` of year `y`. */
export function monthAtIndex(y: number, index: number): number {
  const adarLast = HDate.isLeapYear(y) ? 6 : 5;
  return index <= adarLast ? index + HM.TISHREI : index - adarLast;
}

/** A Hebrew month (year + Tishrei-based position). */
export interface HebrewMonth {
  year: number;
  index: number;
}

/** The month `count` Hebrew months after `from` (Adar I and Adar II are two months of a leap year). */
export function addHebrewMonths(from: HebrewMonth, count: number): HebrewMonth {
  let year = from.year;
  let index = from.index + count;
  for (;;) {
    const n = HDate.monthsInYear(year);
    if (index < n) return { year, index };
    index -= n;
    year++;
  }
}

/**
 * The R.D. day of Hebrew day `day` in the given month; a day 30 that the month lacks (a 29-day month)
 * becomes the 1st of the next month.
 */
export function dayInHebrewMonth(month: HebrewMonth, day: number): number {
  const m = monthAtIndex(month.year, month.index);
  const len = HDate.daysInMonth(m, month.year);
  if (day <= len) return HDate.hebrew2abs(month.year, m, day);
  return HDate.hebrew2abs(month.year, m, len) + 1;
}

export function hdateOfRd(rd: number): HDate {
  return new HDate(rd);
}

/** Annually_Hebrew: the anniversary (`getBirthdayOrAnniversary`) or yahrzeit (`getYahrzeit`) in `hyear`. */
export function hebrewAnniversaryRd(
  original: HDate,
  hyear: number,
  rule: 'anniversary' | 'yahrzeit',
): number {
  const hd =
    rule === 'yahrzeit'
      ? HebrewCalendar.getYahrzeit(hyear, original)
      : HebrewCalendar.getBirthdayOrAnniversary(hyear, original);
  if (!hd) throw new RangeError(`no ${rule} of ${original.toString()} in ${hyear}`);
  return hd.abs();
}

// --------------------------------------------------------------------------------------------
// Yizkor and special days, per Hebrew year (each list sorted ascending)

const yizkorYears = new Memo<string, readonly number[]>(2000);

/**
 * The four Yizkor days of Hebrew year `y`: Yom Kippur (10 Tishrei), Shmini Atzeret (22 Tishrei),
 * the last day of Pesach (22 Nisan in the diaspora, 21 in Israel) and of Shavuot (7 / 6 Sivan).
 */
export function yizkorDays(y: number, il: boolean): readonly number[] {
  return yizkorYears.get(`${y}:${il}`, () => [
    HDate.hebrew2abs(y, HM.TISHREI, 10),
    HDate.hebrew2abs(y, HM.TISHREI, 22),
    HDate.hebrew2abs(y, HM.NISAN, il ? 21 : 22),
    HDate.hebrew2abs(y, HM.SIVAN, il ? 6 : 7),
  ]);
}

/** The fasts of the `fast_days` preset, as hebcal names them (it already applies the postponements). */
const FAST_NAMES = new Set([
  'Tzom Gedaliah',
  'Yom Kippur',
  "Asara B'Tevet",
  "Ta'anit Esther",
  'Tzom Tammuz',
  "Tish'a B'Av",
  "Tish'a B'Av (observed)",
]);

export type PresetName =
  | 'erev_shabbat'
  | 'rosh_chodesh'
  | 'erev_rosh_chodesh'
  | 'fast_days'
  | 'chanukah'
  | 'purim';

/** First day of each Rosh Chodesh of year `y` (every month but Tishrei, whose 1st is Rosh Hashana). */
function roshChodeshFirstDays(y: number): number[] {
  const out: number[] = [];
  const n = HDate.monthsInYear(y);
  for (let index = 1; index < n; index++) {
    const m = monthAtIndex(y, index);
    const first = HDate.hebrew2abs(y, m, 1);
    const prev = monthAtIndex(y, index - 1);
    out.push(HDate.daysInMonth(prev, y) === 30 ? first - 1 : first);
  }
  return out;
}

function presetDays(y: number, preset: PresetName, il: boolean): number[] {
  switch (preset) {
    case 'erev_shabbat': {
      const start = HDate.hebrew2abs(y, HM.TISHREI, 1);
      const end = HDate.hebrew2abs(y + 1, HM.TISHREI, 1);
      const out: number[] = [];
      for (let d = start + ((5 - weekdayOfRd(start) + 7) % 7); d < end; d += 7) out.push(d);
      return out;
    }
    case 'rosh_chodesh':
      return roshChodeshFirstDays(y);
    case 'erev_rosh_chodesh':
      return roshChodeshFirstDays(y).map((d) => d - 1);
    case 'fast_days':
      return HebrewCalendar.getHolidaysForYearArray(y, il)
        .filter((ev) => FAST_NAMES.has(ev.getDesc()))
        .map((ev) => ev.getDate().abs());
    case 'chanukah': {
      const first = HDate.hebrew2abs(y, HM.KISLEV, 25);
      return [0, 1, 2, 3, 4, 5, 6, 7].map((i) => first + i);
    }
    case 'purim':
      return [HDate.hebrew2abs(y, HDate.isLeapYear(y) ? HM.ADAR_II : HM.ADAR_I, 14)];
  }
}

const presetYears = new Memo<string, readonly number[]>(5000);

/** Sorted, de-duplicated days of the given presets within Hebrew year `y`. */
export function specialDaysOfYear(y: number, presets: readonly PresetName[], il: boolean): readonly number[] {
  const key = `${y}:${il}:${presets.join(',')}`;
  return presetYears.get(key, () => {
    const all = new Set<number>();
    for (const p of presets) for (const d of presetDays(y, p, il)) all.add(d);
    return [...all].sort((a, b) => a - b);
  });
}

/** `{ en, he }` Hebrew date of a civil date. */
export function hebrewDateOf(date: string): { en: string; he: string } {
  const info = dayInfoOf(civilToRd(date));
  return { en: info.en, he: info.he };
}

/** True when the civil date is Shabbat or a Yom Tov (Israel's schedule when `il`, else the diaspora's). */
export function isShabbatOrYomTov(date: string, il: boolean): boolean {
  return isShabbatOrYomTovRd(civilToRd(date), il);
}
