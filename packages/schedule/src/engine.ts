/**
 * The schedule engine: from a schedule's terms to its dated instalments. Pure: no I/O, no clock.
 */
import { FREQUENCIES, type Frequency, SPECIAL_DAY_PRESETS } from '@kupah/contracts';
import { addCivilMonths, parseCivilDate, rdFromYmd, ymdFromRd } from './civil.ts';
import {
  addHebrewMonths,
  dayInfoOf,
  dayInHebrewMonth,
  type HebrewMonth,
  hdateOfRd,
  hebrewAnniversaryRd,
  hebrewYearOfRd,
  permittedOnOrBefore,
  specialDaysOfYear,
  tishreiIndex,
  yizkorDays,
} from './hebrew.ts';

export type SpecialDayPreset = (typeof SPECIAL_DAY_PRESETS)[number];
export type AnniversaryRule = 'anniversary' | 'yahrzeit';

export interface ScheduleTerms {
  frequency: Frequency;
  /** Civil date `YYYY-MM-DD` in the org's time zone: instalment 1 is due on it. */
  startDate: string;
  /** Number of instalments, 1…{@link MAX_INSTALMENTS}. */
  count: number;
  /** Instalment 1, integer minor units (> 0). */
  firstMinor: number;
  /** Instalments 2…n, integer minor units (> 0). */
  perPaymentMinor: number;
  /** Israel's holiday schedule (Yom Tov, Yizkor days) when true, else the diaspora's. */
  il: boolean;
  /** Move a charge due on Shabbat or Yom Tov to the nearest earlier day that is neither. */
  shabbatShift: boolean;
  /** Special_Days only: presets and/or explicit civil dates (at least one of them). */
  specialDays?: { presets: readonly SpecialDayPreset[]; dates: readonly string[] };
  /** Annually_Hebrew only (default `anniversary`). */
  anniversaryRule?: AnniversaryRule;
}

export interface Instalment {
  /** 1…count */
  sequence: number;
  /** Civil date the charge is due, after any Shabbat/Yom Tov move. */
  dueDate: string;
  /** Civil date the frequency gives, before the move. */
  nominalDate: string;
  /** Hebrew date of `dueDate`, e.g. `15 Tishrei 5787`. */
  hebrewDate: string;
  /** Hebrew date of `dueDate` in Hebrew letters, e.g. `ט״ו תִּשְׁרֵי תשפ״ז`. */
  hebrewDateHebrew: string;
  amountMinor: number;
  /** True when the Shabbat/Yom Tov rule moved the charge (`dueDate` < `nominalDate`). */
  moved: boolean;
}

/** Impossible or malformed terms; `field` names the offending term (`count`, `specialDays`, …). */
export class ScheduleTermsError extends Error {
  override readonly name = 'ScheduleTermsError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/** Upper bound on `count` (the API allows 1,000; the engine refuses absurd loops). */
export const MAX_INSTALMENTS = 10_000;
/** Every nominal date lies within this many years of the start date, else the terms are impossible. */
export const HORIZON_YEARS = 200;
const LAST_RD = rdFromYmd(9999, 12, 31);

const FREQUENCY_SET: ReadonlySet<string> = new Set(FREQUENCIES);
const PRESET_SET: ReadonlySet<string> = new Set(SPECIAL_DAY_PRESETS);
const DAY_STEPS: Partial<Record<Frequency, number>> = {
  Daily: 1,
  Weekly: 7,
  Every_3rd_week: 21,
  Every_4th_week: 28,
};
const CIVIL_MONTH_STEPS: Partial<Record<Frequency, number>> = {
  Monthly: 1,
  Every_2nd_month: 2,
  Every_3rd_month: 3,
};
const HEBREW_MONTH_STEPS: Partial<Record<Frequency, number>> = {
  Monthly_Hebrew: 1,
  Every_2nd_Hebrew_month: 2,
  Every_3rd_Hebrew_month: 3,
};

function isPositiveInt(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0;
}

interface Checked {
  startRd: number;
  horizonRd: number;
}

function check(terms: ScheduleTerms): Checked {
  if (!FREQUENCY_SET.has(terms.frequency)) {
    throw new ScheduleTermsError('frequency', `unknown frequency ${JSON.stringify(terms.frequency)}`);
  }
  const startRd = typeof terms.startDate === 'string' ? parseCivilDate(terms.startDate) : null;
  if (startRd === null) throw new ScheduleTermsError('startDate', 'must be a real civil date YYYY-MM-DD');
  if (!isPositiveInt(terms.count) || terms.count > MAX_INSTALMENTS) {
    throw new ScheduleTermsError('count', `must be a whole number from 1 to ${MAX_INSTALMENTS}`);
  }
  if (!isPositiveInt(terms.firstMinor)) {
    throw new ScheduleTermsError('firstMinor', 'must be a positive whole number of minor units');
  }
  if (!isPositiveInt(terms.perPaymentMinor)) {
    throw new ScheduleTermsError('perPaymentMinor', 'must be a positive whole number of minor units');
  }
  const rule = terms.anniversaryRule;
  if (rule !== undefined && rule !== 'anniversary' && rule !== 'yahrzeit') {
    throw new ScheduleTermsError('anniversaryRule', 'must be anniversary or yahrzeit');
  }
  const s = ymdFromRd(startRd);
  // 200 years on, but never past 9999-12-31 (dates stay four-digit YYYY-MM-DD).
  const horizonRd = Math.min(addCivilMonths(s.year, s.month, s.day, HORIZON_YEARS * 12), LAST_RD);
  return { startRd, horizonRd };
}

/** Nominal R.D. days of instalments 2…count (ascending, all after `startRd`). */
function laterNominalDays(terms: ScheduleTerms, c: Checked): number[] {
  const n = terms.count - 1;
  const { startRd } = c;
  const out: number[] = [];
  // Pushes a day; false once past the horizon (the caller then reports the terms as impossible).
  const add = (d: number): boolean => {
    out.push(d);
    return d <= c.horizonRd;
  };
  if (n === 0 && terms.frequency !== 'Special_Days') return out;
  const f = terms.frequency;

  const dayStep = DAY_STEPS[f];
  if (dayStep !== undefined) {
    for (let k = 1; k <= n; k++) if (!add(startRd + k * dayStep)) break;
    return out;
  }

  const civilMonths = CIVIL_MONTH_STEPS[f];
  if (civilMonths !== undefined || f === 'Annually') {
    const step = civilMonths ?? 12;
    const s = ymdFromRd(startRd);
    // Always from the ORIGINAL day of the month: 31 Jan → 28/29 Feb → 31 Mar (no drift).
    // Annually on 29 Feb gives 28 Feb in common years (addCivilMonths clamps to the month's end).
    for (let k = 1; k <= n; k++) if (!add(addCivilMonths(s.year, s.month, s.day, k * step))) break;
    return out;
  }

  const hebrewMonths = HEBREW_MONTH_STEPS[f];
  if (hebrewMonths !== undefined) {
    const hd = hdateOfRd(startRd);
    const day = hd.getDate();
    let month: HebrewMonth = { year: hd.getFullYear(), index: tishreiIndex(hd.getFullYear(), hd.getMonth()) };
    for (let k = 1; k <= n; k++) {
      month = addHebrewMonths(month, hebrewMonths);
      if (!add(dayInHebrewMonth(month, day))) break;
    }
    return out;
  }

  if (f === 'Annually_Hebrew') {
    const hd = hdateOfRd(startRd);
    const rule = terms.anniversaryRule ?? 'anniversary';
    for (let k = 1; k <= n; k++) {
      if (!add(hebrewAnniversaryRd(hd, hd.getFullYear() + k, rule))) break;
    }
    return out;
  }

  if (f === 'Yizkor') {
    return nextFromYearly(startRd, n, c.horizonRd, (y) => yizkorDays(y, terms.il));
  }

  // Special_Days
  const sd = terms.specialDays;
  const presets = sd?.presets ?? [];
  const dates = sd?.dates ?? [];
  if (!Array.isArray(presets) || !Array.isArray(dates) || (presets.length === 0 && dates.length === 0)) {
    throw new ScheduleTermsError('specialDays', 'Special_Days needs presets and/or dates');
  }
  for (const p of presets) {
    if (!PRESET_SET.has(p)) {
      throw new ScheduleTermsError('specialDays.presets', `unknown preset ${JSON.stringify(p)}`);
    }
  }
  const explicit = new Set<number>();
  for (const d of dates) {
    const rd = typeof d === 'string' ? parseCivilDate(d) : null;
    if (rd === null)
      throw new ScheduleTermsError('specialDays.dates', `${JSON.stringify(d)} is not a civil date`);
    if (rd > startRd) explicit.add(rd);
  }
  if (n === 0) return out;
  const presetList = [...new Set(presets)].sort();
  const explicitSorted = [...explicit].sort((a, b) => a - b);
  return nextFromYearly(
    startRd,
    n,
    c.horizonRd,
    (y) => specialDaysOfYear(y, presetList, terms.il),
    explicitSorted,
  );
}

/**
 * The first `n` days strictly after `startRd` of the union of a per-Hebrew-year list and an explicit
 * sorted list, stopping at the horizon.
 */
function nextFromYearly(
  startRd: number,
  n: number,
  horizonRd: number,
  daysOfYear: (hyear: number) => readonly number[],
  explicit: readonly number[] = [],
): number[] {
  const out: number[] = [];
  const push = (d: number) => {
    // Sorted input: skip a day already taken (a preset day that is also an explicit date).
    if (out.length === 0 || d > (out[out.length - 1] as number)) out.push(d);
  };
  let e = 0;
  const takeExplicitBefore = (limit: number) => {
    for (; out.length < n && e < explicit.length && (explicit[e] as number) < limit; e++) {
      const d = explicit[e] as number;
      if (d <= horizonRd) push(d);
    }
  };
  const lastYear = hebrewYearOfRd(horizonRd);
  for (let y = hebrewYearOfRd(startRd); y <= lastYear && out.length < n; y++) {
    for (const d of daysOfYear(y)) {
      if (d <= startRd) continue;
      if (d > horizonRd || out.length >= n) break;
      takeExplicitBefore(d);
      if (out.length < n) push(d);
    }
  }
  takeExplicitBefore(Number.POSITIVE_INFINITY);
  return out;
}

/** The instalments of a schedule; throws {@link ScheduleTermsError} on impossible terms. */
export function computeInstalments(terms: ScheduleTerms): Instalment[] {
  const c = check(terms);
  const later = laterNominalDays(terms, c);
  if (
    later.length < terms.count - 1 ||
    (later.length > 0 && (later[later.length - 1] as number) > c.horizonRd)
  ) {
    throw new ScheduleTermsError(
      'count',
      `only ${later.length + 1} ${terms.frequency} dates within ${HORIZON_YEARS} years ` +
        `of ${terms.startDate}; ${terms.count} requested`,
    );
  }
  const out: Instalment[] = new Array(terms.count);
  for (let i = 0; i < terms.count; i++) {
    const nominal = i === 0 ? c.startRd : (later[i - 1] as number);
    const due = terms.shabbatShift ? permittedOnOrBefore(nominal, terms.il) : nominal;
    const dueInfo = dayInfoOf(due);
    out[i] = {
      sequence: i + 1,
      dueDate: dueInfo.civil,
      nominalDate: due === nominal ? dueInfo.civil : dayInfoOf(nominal).civil,
      hebrewDate: dueInfo.en,
      hebrewDateHebrew: dueInfo.he,
      amountMinor: i === 0 ? terms.firstMinor : terms.perPaymentMinor,
      moved: due !== nominal,
    };
  }
  return out;
}
