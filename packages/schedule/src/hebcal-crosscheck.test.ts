/**
 * Cross-check of every date the engine produces against the independent `hebcal` command (Debian
 * package `hebcal`, a separate implementation in Go). See README.md "Cross-check".
 *
 * The command is run a handful of times over the whole range (2024–2065) and its output cached:
 *   hebcal -w -d -g -x -h --years N 2024            Hebrew date and weekday of every day
 *   hebcal --lang he -d -g -x -h --years N 2024     the same in Hebrew letters
 *   hebcal -g --years N 2024   /  hebcal -i -g …    holidays, fasts, Rosh Chodesh (diaspora / Israel)
 *   hebcal -Y FILE -g -x -h --years N 2024          yahrzeits of every sampled start date
 * The expected dates are derived from that output alone (never from @hebcal/core), then compared with
 * the engine's nominal dates, due dates (Shabbat/Yom Tov rule) and Hebrew dates.
 *
 * Without the command the test fails in CI (`CI` set) and is skipped elsewhere.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { computeInstalments, type Instalment, type ScheduleTerms, type SpecialDayPreset } from './index.ts';

const FIRST_YEAR = 2024;
const YEARS = 42; // 2024–2065: start dates 2025–2050 plus 12 years of annual instalments
const SAMPLE_FROM = '2025-01-01';
const SAMPLE_TO = '2050-12-31';
const SAMPLE_EVERY = 17;

function findHebcal(): string | null {
  // HEBCAL_BIN, when set, is the only candidate (so a run can also prove the missing-command path).
  const candidates = process.env.HEBCAL_BIN ? [process.env.HEBCAL_BIN] : ['hebcal', '/usr/bin/hebcal'];
  for (const bin of candidates) {
    const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
    if (r.status === 0 && /hebcal/i.test(`${r.stdout}${r.stderr}`)) return bin;
  }
  return null;
}

const HEBCAL = findHebcal();

function hebcal(args: string[]): string[] {
  const r = spawnSync(HEBCAL as string, args, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`hebcal ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout.split('\n').filter((l) => l.length > 0);
}

interface CliDay {
  iso: string;
  pos: number;
  weekday: string;
  day: number;
  month: string;
  year: number;
  /** `30 Cheshvan 5787`, the shape of the engine's `hebrewDate` */
  en: string;
  he: string;
}
interface CliMonth {
  name: string;
  year: number;
  first: CliDay;
  length: number;
}

const cli = {
  days: [] as CliDay[],
  byIso: new Map<string, CliDay>(),
  byHebrew: new Map<string, CliDay>(),
  months: [] as CliMonth[],
  monthIndex: new Map<string, number>(),
  leapYears: new Set<number>(),
  holidays: { il: new Map<string, string[]>(), diaspora: new Map<string, string[]>() },
  yahrzeits: new Map<string, string[]>(),
  runs: 0,
  lines: 0,
};

function loadCalendar(): void {
  const years = ['--years', String(YEARS), String(FIRST_YEAR)];
  const dayLines = hebcal(['-w', '-d', '-g', '-x', '-h', ...years]);
  const heLines = hebcal(['--lang', 'he', '-d', '-g', '-x', '-h', ...years]);
  cli.runs += 2;
  cli.lines += dayLines.length + heLines.length;
  const he = new Map<string, string>();
  for (const line of heLines) he.set(line.slice(0, 10), line.slice(11));
  const re = /^(\d{4}-\d{2}-\d{2}) (\w{3}), (\d+)(?:st|nd|rd|th) of (.+), (\d+)$/;
  for (const line of dayLines) {
    const m = re.exec(line);
    if (!m) throw new Error(`unexpected hebcal line: ${line}`);
    const [, iso = '', weekday = '', d = '', month = '', y = ''] = m;
    const day: CliDay = {
      iso,
      pos: cli.days.length,
      weekday,
      day: Number(d),
      month,
      year: Number(y),
      en: `${d} ${month} ${y}`,
      he: he.get(iso) ?? '',
    };
    cli.days.push(day);
    cli.byIso.set(iso, day);
    cli.byHebrew.set(day.en, day);
    if (month === 'Adar I') cli.leapYears.add(day.year);
    const last = cli.months[cli.months.length - 1];
    if (last && last.name === month && last.year === day.year) last.length++;
    else {
      cli.monthIndex.set(`${month} ${day.year}`, cli.months.length);
      cli.months.push({ name: month, year: day.year, first: day, length: 1 });
    }
  }
  for (const il of [false, true]) {
    const lines = hebcal([...(il ? ['-i'] : []), '-g', ...years]);
    cli.runs++;
    cli.lines += lines.length;
    const map = il ? cli.holidays.il : cli.holidays.diaspora;
    for (const line of lines) {
      const iso = line.slice(0, 10);
      const list = map.get(iso) ?? [];
      list.push(line.slice(11));
      map.set(iso, list);
    }
  }
}

function loadYahrzeits(starts: readonly string[]): void {
  const dir = mkdtempSync(join(tmpdir(), 'kupah-yahrzeit-'));
  try {
    const file = join(dir, 'yahrzeit.txt');
    const lines = starts.map((iso, i) => `${iso.slice(5, 7)} ${iso.slice(8, 10)} ${iso.slice(0, 4)} S${i}`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const out = hebcal(['-Y', file, '-g', '-x', '-h', '--years', String(YEARS), String(FIRST_YEAR)]);
    cli.runs++;
    cli.lines += out.length;
    for (const line of out) {
      const label = line.slice(11);
      const list = cli.yahrzeits.get(label) ?? [];
      list.push(line.slice(0, 10));
      cli.yahrzeits.set(label, list);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Expectations derived from the command's output only

function dayAt(pos: number): CliDay {
  const d = cli.days[pos];
  if (!d) throw new Error(`date outside the hebcal range (position ${pos}): widen YEARS`);
  return d;
}
function cliDay(iso: string): CliDay {
  const d = cli.byIso.get(iso);
  if (!d) throw new Error(`${iso} outside the hebcal range: widen YEARS`);
  return d;
}
function monthAt(i: number): CliMonth {
  const m = cli.months[i];
  if (!m) throw new Error(`month ${i} outside the hebcal range`);
  return m;
}
/** Day `day` of month `i`, or the 1st of the next month when month `i` is shorter. */
function dayOfMonthOrNext(i: number, day: number): string {
  const m = monthAt(i);
  return day <= m.length ? dayAt(m.first.pos + day - 1).iso : monthAt(i + 1).first.iso;
}

function expectedHebrewMonthly(start: string, step: number, count: number): string[] {
  const s = cliDay(start);
  const i0 = cli.monthIndex.get(`${s.month} ${s.year}`) as number;
  const out = [start];
  for (let k = 1; k < count; k++) out.push(dayOfMonthOrNext(i0 + k * step, s.day));
  return out;
}

/** Anniversary (not yahrzeit) rule, restated from Calendrical Calculations (see README). */
function expectedAnniversaries(start: string, count: number): string[] {
  const s = cliDay(start);
  const out = [start];
  for (let k = 1; k < count; k++) {
    const y = s.year + k;
    const leap = cli.leapYears.has(y);
    let name = s.month;
    if (s.month === 'Adar' || s.month === 'Adar II') name = leap ? 'Adar II' : 'Adar';
    else if (s.month === 'Adar I') name = leap ? 'Adar I' : 'Adar';
    const i = cli.monthIndex.get(`${name} ${y}`);
    if (i === undefined) throw new Error(`${name} ${y} outside the hebcal range`);
    out.push(dayOfMonthOrNext(i, s.day));
  }
  return out;
}

function expectedYahrzeits(start: string, label: string, count: number): string[] {
  const later = (cli.yahrzeits.get(label) ?? []).filter((iso) => iso > start).sort();
  return [start, ...later.slice(0, count - 1)];
}

function holidayDays(il: boolean, pick: (name: string, day: CliDay) => boolean): string[] {
  const map = il ? cli.holidays.il : cli.holidays.diaspora;
  const out: string[] = [];
  for (const [iso, names] of map) if (names.some((n) => pick(n, cliDay(iso)))) out.push(iso);
  return out.sort();
}

const YIZKOR = {
  diaspora: new Set(['Yom Kippur', 'Shmini Atzeret', 'Pesach VIII', 'Shavuot II']),
  il: new Set(['Yom Kippur', 'Shmini Atzeret', 'Pesach VII', 'Shavuot', 'Shavuot I']),
};
const YOM_TOV = {
  diaspora: new RegExp(
    '^(Rosh Hashana (\\d+|II)|Yom Kippur|Sukkot (I|II)|Shmini Atzeret|Simchat Torah|' +
      'Pesach (I|II|VII|VIII)|Shavuot (I|II))$',
  ),
  il: /^(Rosh Hashana (\d+|II)|Yom Kippur|Sukkot I|Shmini Atzeret|Pesach (I|VII)|Shavuot( I)?)$/,
};
const FASTS = new Set([
  'Tzom Gedaliah',
  'Yom Kippur',
  "Asara B'Tevet",
  "Ta'anit Esther",
  'Tzom Tammuz',
  "Tish'a B'Av",
  "Tish'a B'Av (observed)",
]);

let presetDays: Record<SpecialDayPreset, string[]>;
let fastDaysIl: string[];
let yizkorDays: { il: string[]; diaspora: string[] };
let yomTov: { il: Set<string>; diaspora: Set<string> };

function derivePresets(): void {
  const rc = holidayDays(false, (n) => n.startsWith('Rosh Chodesh ')).filter((iso) => {
    const prev = cli.holidays.diaspora.get(dayAt(cliDay(iso).pos - 1).iso) ?? [];
    return !prev.some((n) => n.startsWith('Rosh Chodesh '));
  });
  presetDays = {
    erev_shabbat: cli.days.filter((d) => d.weekday === 'Fri').map((d) => d.iso),
    rosh_chodesh: rc,
    erev_rosh_chodesh: rc.map((iso) => dayAt(cliDay(iso).pos - 1).iso),
    fast_days: holidayDays(false, (n) => FASTS.has(n)),
    chanukah: holidayDays(false, (n) => /^Chanukah: ([2-8] Candles|8th Day)$/.test(n)),
    purim: holidayDays(false, (n) => n === 'Purim'),
  };
  fastDaysIl = holidayDays(true, (n) => FASTS.has(n));
  yizkorDays = {
    il: holidayDays(true, (n) => YIZKOR.il.has(n)),
    diaspora: holidayDays(false, (n) => YIZKOR.diaspora.has(n)),
  };
  yomTov = {
    il: new Set(holidayDays(true, (n) => YOM_TOV.il.test(n))),
    diaspora: new Set(holidayDays(false, (n) => YOM_TOV.diaspora.test(n))),
  };
}

function nextOf(
  sorted: readonly string[],
  start: string,
  count: number,
  extra: readonly string[] = [],
): string[] {
  const later = [...new Set([...sorted, ...extra])].filter((iso) => iso > start).sort();
  return [start, ...later.slice(0, count - 1)];
}

function forbidden(iso: string, il: boolean): boolean {
  return cliDay(iso).weekday === 'Sat' || (il ? yomTov.il : yomTov.diaspora).has(iso);
}

/** Hebrew letters without vowel points and cantillation (U+0591–U+05C7 except punctuation). */
function stripNikud(s: string): string {
  return s.replace(/[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]/g, '');
}

// ---------------------------------------------------------------------------------------------

interface Tally {
  schedules: number;
  instalments: number;
  comparisons: number;
  mismatches: string[];
  disagreements: number;
  /** Hebrew-letter dates whose letters agree but whose vowel points (nikud) differ: see README. */
  nikudOnly: number;
}

function compare(
  tally: Tally,
  terms: ScheduleTerms,
  got: Instalment[],
  expectedNominal: string[] | null,
): void {
  tally.schedules++;
  const what = `${terms.frequency} ${terms.startDate} il=${terms.il}${
    terms.anniversaryRule ? ` ${terms.anniversaryRule}` : ''
  }${terms.specialDays ? ` ${terms.specialDays.presets.join('+')}` : ''}`;
  const miss = (msg: string) => {
    tally.disagreements++;
    if (tally.mismatches.length < 50) tally.mismatches.push(`${what}: ${msg}`);
  };
  if (expectedNominal) {
    tally.comparisons++;
    const nominal = got.map((i) => i.nominalDate);
    if (nominal.join() !== expectedNominal.join()) {
      miss(`nominal dates ${nominal.join(' ')} ≠ hebcal ${expectedNominal.join(' ')}`);
    }
  }
  for (const i of got) {
    tally.instalments++;
    const due = cliDay(i.dueDate);
    tally.comparisons += 2;
    if (i.hebrewDate !== due.en) miss(`#${i.sequence} ${i.dueDate} is ${i.hebrewDate}, hebcal ${due.en}`);
    if (i.hebrewDateHebrew !== due.he) {
      if (stripNikud(i.hebrewDateHebrew) === stripNikud(due.he)) tally.nikudOnly++;
      else miss(`#${i.sequence} ${i.dueDate} is ${i.hebrewDateHebrew}, hebcal ${due.he}`);
    }
    if (terms.shabbatShift) {
      // The due date is permitted, and every day after it up to the nominal date is Shabbat/Yom Tov.
      tally.comparisons++;
      let ok = !forbidden(i.dueDate, terms.il) && i.dueDate <= i.nominalDate;
      for (let p = due.pos + 1; ok && dayAt(p).iso <= i.nominalDate; p++)
        ok = forbidden(dayAt(p).iso, terms.il);
      if (!ok)
        miss(`#${i.sequence} nominal ${i.nominalDate} due ${i.dueDate}: not the nearest permitted day`);
    } else if (i.dueDate !== i.nominalDate) {
      miss(`#${i.sequence} moved although the rule is off`);
    }
  }
}

function sampleStarts(): string[] {
  const set = new Set<string>();
  const from = cliDay(SAMPLE_FROM).pos;
  const to = cliDay(SAMPLE_TO).pos;
  for (let p = from; p <= to; p += SAMPLE_EVERY) set.add(dayAt(p).iso);
  // The tricky days of every Hebrew year in the range, found by their Hebrew names.
  const tricky = [
    '29 Cheshvan',
    '30 Cheshvan',
    '29 Kislev',
    '30 Kislev',
    '30 Tishrei',
    "30 Sh'vat",
    '1 Adar I',
    '29 Adar I',
    '30 Adar I',
    '14 Adar',
    '29 Adar',
    '14 Adar II',
    '29 Adar II',
    '10 Tishrei',
    '22 Tishrei',
    '21 Nisan',
    '22 Nisan',
    '6 Sivan',
    '7 Sivan',
    '29 Elul',
  ];
  const firstYear = cliDay(SAMPLE_FROM).year;
  const lastYear = cliDay(SAMPLE_TO).year;
  for (let y = firstYear; y <= lastYear; y++) {
    for (const t of tricky) {
      const d = cli.byHebrew.get(`${t} ${y}`);
      if (d && d.iso >= SAMPLE_FROM && d.iso <= SAMPLE_TO) set.add(d.iso);
    }
  }
  return [...set].sort();
}

const base = { firstMinor: 1800, perPaymentMinor: 1800 };

describe.skipIf(HEBCAL === null)('cross-check against the hebcal command', () => {
  let starts: string[] = [];
  const tally: Tally = {
    schedules: 0,
    instalments: 0,
    comparisons: 0,
    mismatches: [],
    disagreements: 0,
    nikudOnly: 0,
  };

  beforeAll(() => {
    loadCalendar();
    derivePresets();
    starts = sampleStarts();
    loadYahrzeits(starts);
  });

  test('the hebcal output covers the range and looks as expected', () => {
    expect(cli.days.length).toBeGreaterThan(YEARS * 365);
    expect(cliDay('2026-09-26').en).toBe('15 Tishrei 5787');
    expect(cli.leapYears.has(5787)).toBe(true);
    expect(cli.leapYears.has(5786)).toBe(false);
    expect(starts.length).toBeGreaterThan(800);
    expect(yizkorDays.il.length).toBe(yizkorDays.diaspora.length);
    expect(cli.yahrzeits.size).toBe(starts.length);
  });

  test('Hebrew-month frequencies, anniversaries and yahrzeits agree with hebcal', () => {
    starts.forEach((start, idx) => {
      const il = idx % 2 === 0;
      const shabbatShift = idx % 3 !== 0;
      const common = { ...base, startDate: start, il, shabbatShift };
      for (const [frequency, step, count] of [
        ['Monthly_Hebrew', 1, 14],
        ['Every_2nd_Hebrew_month', 2, 8],
        ['Every_3rd_Hebrew_month', 3, 6],
      ] as const) {
        const terms: ScheduleTerms = { ...common, frequency, count };
        compare(tally, terms, computeInstalments(terms), expectedHebrewMonthly(start, step, count));
      }
      const anniversary: ScheduleTerms = { ...common, frequency: 'Annually_Hebrew', count: 12 };
      compare(tally, anniversary, computeInstalments(anniversary), expectedAnniversaries(start, 12));
      const yahrzeit: ScheduleTerms = { ...anniversary, anniversaryRule: 'yahrzeit' };
      compare(tally, yahrzeit, computeInstalments(yahrzeit), expectedYahrzeits(start, `S${idx}`, 12));
    });
    expect(tally.mismatches).toEqual([]);
  });

  test('Yizkor days (Israel and diaspora) agree with hebcal', () => {
    for (const start of starts) {
      for (const il of [false, true]) {
        const terms: ScheduleTerms = {
          ...base,
          frequency: 'Yizkor',
          startDate: start,
          count: 9,
          il,
          shabbatShift: true,
        };
        const expected = nextOf(il ? yizkorDays.il : yizkorDays.diaspora, start, 9);
        compare(tally, terms, computeInstalments(terms), expected);
      }
    }
    expect(tally.mismatches).toEqual([]);
  });

  test('Special_Days presets agree with hebcal', () => {
    const counts: Record<SpecialDayPreset, number> = {
      erev_shabbat: 10,
      rosh_chodesh: 14,
      erev_rosh_chodesh: 14,
      fast_days: 8,
      chanukah: 10,
      purim: 4,
    };
    starts.forEach((start, idx) => {
      const il = idx % 2 === 1;
      for (const preset of Object.keys(counts) as SpecialDayPreset[]) {
        const count = counts[preset];
        const terms: ScheduleTerms = {
          ...base,
          frequency: 'Special_Days',
          startDate: start,
          count,
          il,
          shabbatShift: idx % 3 === 0,
          specialDays: { presets: [preset], dates: [] },
        };
        const days = preset === 'fast_days' && il ? fastDaysIl : presetDays[preset];
        compare(tally, terms, computeInstalments(terms), nextOf(days, start, count));
      }
      // A union of presets and explicit dates (one of them also a preset day: counted once).
      const explicit = [dayAt(cliDay(start).pos + 3).iso, presetDays.purim.find((d) => d > start) ?? start];
      const union: ScheduleTerms = {
        ...base,
        frequency: 'Special_Days',
        startDate: start,
        count: 12,
        il: false,
        shabbatShift: true,
        specialDays: { presets: ['purim', 'chanukah', 'fast_days'], dates: explicit },
      };
      const expected = nextOf(
        [...presetDays.purim, ...presetDays.chanukah, ...presetDays.fast_days],
        start,
        12,
        [...explicit],
      );
      compare(tally, union, computeInstalments(union), expected);
    });
    expect(tally.mismatches).toEqual([]);
  });

  test('civil frequencies: Hebrew dates and Shabbat/Yom Tov moves agree with hebcal', () => {
    starts.forEach((start, idx) => {
      for (const il of [false, true]) {
        for (const [frequency, count] of [
          ['Daily', 40],
          ['Weekly', 20],
          ['Monthly', 14],
          ['Annually', 3],
        ] as const) {
          const terms: ScheduleTerms = {
            ...base,
            frequency,
            startDate: start,
            count,
            il,
            shabbatShift: idx % 4 !== 0,
          };
          compare(tally, terms, computeInstalments(terms), null);
        }
      }
    });
    expect(tally.mismatches).toEqual([]);
  });

  test('summary', () => {
    console.log(
      `hebcal cross-check: ${cli.runs} hebcal runs (${cli.lines} lines), ${starts.length} start dates, ` +
        `${tally.schedules} schedules, ${tally.instalments} instalments, ${tally.comparisons} comparisons, ` +
        `${tally.disagreements} disagreements; ` +
        `${tally.nikudOnly} Hebrew-letter dates differ in vowel points only`,
    );
    expect(tally.comparisons).toBeGreaterThan(100_000);
    expect(tally.mismatches).toEqual([]);
  });
});

test.runIf(HEBCAL === null && Boolean(process.env.CI))(
  'the hebcal command is installed (required in CI)',
  () => {
    throw new Error(
      'The `hebcal` command (Debian package hebcal) is missing: the schedule cross-check cannot run. ' +
        'Install it (apt-get install -y hebcal) or set HEBCAL_BIN.',
    );
  },
);
