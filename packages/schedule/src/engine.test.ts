import { describe, expect, test } from 'vitest';
import {
  computeInstalments,
  hebrewDateOf,
  type Instalment,
  type ScheduleTerms,
  ScheduleTermsError,
  type SpecialDayPreset,
} from './index.ts';

const base = { firstMinor: 5000, perPaymentMinor: 1800, il: false, shabbatShift: false };

function run(
  t: Partial<ScheduleTerms> & Pick<ScheduleTerms, 'frequency' | 'startDate' | 'count'>,
): Instalment[] {
  return computeInstalments({ ...base, ...t });
}
const nominal = (xs: Instalment[]) => xs.map((i) => i.nominalDate);
const due = (xs: Instalment[]) => xs.map((i) => i.dueDate);
const hebrew = (xs: Instalment[]) => xs.map((i) => i.hebrewDate);

function termsError(t: Partial<ScheduleTerms>): ScheduleTermsError {
  try {
    computeInstalments({ ...base, frequency: 'Monthly', startDate: '2026-01-01', count: 3, ...t });
  } catch (e) {
    expect(e).toBeInstanceOf(ScheduleTermsError);
    return e as ScheduleTermsError;
  }
  throw new Error('expected a ScheduleTermsError');
}

describe('civil frequencies', () => {
  test('Daily adds one day', () => {
    expect(nominal(run({ frequency: 'Daily', startDate: '2025-12-30', count: 4 }))).toEqual([
      '2025-12-30',
      '2025-12-31',
      '2026-01-01',
      '2026-01-02',
    ]);
  });

  test('Weekly, Every_3rd_week and Every_4th_week add 7, 21 and 28 days', () => {
    const start = { startDate: '2026-01-05', count: 3 };
    expect(nominal(run({ frequency: 'Weekly', ...start }))).toEqual([
      '2026-01-05',
      '2026-01-12',
      '2026-01-19',
    ]);
    expect(nominal(run({ frequency: 'Every_3rd_week', ...start }))).toEqual([
      '2026-01-05',
      '2026-01-26',
      '2026-02-16',
    ]);
    expect(nominal(run({ frequency: 'Every_4th_week', ...start }))).toEqual([
      '2026-01-05',
      '2026-02-02',
      '2026-03-02',
    ]);
  });

  test('Monthly from 31 January keeps the original day (no drift)', () => {
    expect(nominal(run({ frequency: 'Monthly', startDate: '2027-01-31', count: 6 }))).toEqual([
      '2027-01-31',
      '2027-02-28',
      '2027-03-31',
      '2027-04-30',
      '2027-05-31',
      '2027-06-30',
    ]);
    expect(nominal(run({ frequency: 'Monthly', startDate: '2028-01-31', count: 3 }))).toEqual([
      '2028-01-31',
      '2028-02-29',
      '2028-03-31',
    ]);
  });

  test('Every_2nd_month and Every_3rd_month from the 31st', () => {
    expect(nominal(run({ frequency: 'Every_2nd_month', startDate: '2026-08-31', count: 4 }))).toEqual([
      '2026-08-31',
      '2026-10-31',
      '2026-12-31',
      '2027-02-28',
    ]);
    expect(nominal(run({ frequency: 'Every_3rd_month', startDate: '2026-08-31', count: 4 }))).toEqual([
      '2026-08-31',
      '2026-11-30',
      '2027-02-28',
      '2027-05-31',
    ]);
  });

  test('Annually keeps the civil date; 29 February falls on 28 February in common years', () => {
    expect(nominal(run({ frequency: 'Annually', startDate: '2026-03-15', count: 3 }))).toEqual([
      '2026-03-15',
      '2027-03-15',
      '2028-03-15',
    ]);
    expect(nominal(run({ frequency: 'Annually', startDate: '2028-02-29', count: 5 }))).toEqual([
      '2028-02-29',
      '2029-02-28',
      '2030-02-28',
      '2031-02-28',
      '2032-02-29',
    ]);
  });
});

describe('Hebrew months', () => {
  test('day 30 missing in a 29-day month moves to the 1st of the next month, then returns to 30', () => {
    // 30 Tishrei 5786; Cheshvan 5786 and Tevet have 29 days, Kislev 5786 and Sh'vat 30, Adar 5786 29.
    const xs = run({ frequency: 'Monthly_Hebrew', startDate: '2025-10-22', count: 6 });
    expect(hebrew(xs)).toEqual([
      '30 Tishrei 5786',
      '1 Kislev 5786',
      '30 Kislev 5786',
      "1 Sh'vat 5786",
      "30 Sh'vat 5786",
      '1 Nisan 5786',
    ]);
    expect(nominal(xs)).toEqual([
      '2025-10-22',
      '2025-11-21',
      '2025-12-20',
      '2026-01-19',
      '2026-02-17',
      '2026-03-19',
    ]);
  });

  test('a leap year has Adar I and Adar II', () => {
    const xs = run({ frequency: 'Monthly_Hebrew', startDate: '2027-01-09', count: 4 }); // 1 Sh'vat 5787
    expect(hebrew(xs)).toEqual(["1 Sh'vat 5787", '1 Adar I 5787', '1 Adar II 5787', '1 Nisan 5787']);
    // 30 Adar I → Adar II has 29 days → 1 Nisan.
    expect(hebrew(run({ frequency: 'Monthly_Hebrew', startDate: '2027-03-09', count: 2 }))).toEqual([
      '30 Adar I 5787',
      '1 Nisan 5787',
    ]);
    // A common year goes from Adar straight to Nisan.
    expect(hebrew(run({ frequency: 'Monthly_Hebrew', startDate: '2026-01-19', count: 3 }))).toEqual([
      "1 Sh'vat 5786",
      '1 Adar 5786',
      '1 Nisan 5786',
    ]);
  });

  test('13 monthly instalments fit in a leap year, not in a common year', () => {
    const leap = run({ frequency: 'Monthly_Hebrew', startDate: '2026-09-12', count: 13 }); // 1 Tishrei 5787
    expect(hebrew(leap)[12]).toBe('1 Elul 5787');
    expect(leap.every((i) => i.hebrewDate.endsWith('5787'))).toBe(true);
    const common = run({ frequency: 'Monthly_Hebrew', startDate: '2025-09-23', count: 13 }); // 1 Tishrei 5786
    expect(hebrew(common)[11]).toBe('1 Elul 5786');
    expect(hebrew(common)[12]).toBe('1 Tishrei 5787');
  });

  test('Every_2nd_Hebrew_month and Every_3rd_Hebrew_month count Adar I and Adar II', () => {
    const start = { startDate: '2026-12-11', count: 3 }; // 1 Tevet 5787
    expect(hebrew(run({ frequency: 'Every_2nd_Hebrew_month', ...start }))).toEqual([
      '1 Tevet 5787',
      '1 Adar I 5787',
      '1 Nisan 5787',
    ]);
    expect(hebrew(run({ frequency: 'Every_3rd_Hebrew_month', ...start }))).toEqual([
      '1 Tevet 5787',
      '1 Adar II 5787',
      '1 Sivan 5787',
    ]);
  });
});

describe('Annually_Hebrew: anniversary and yahrzeit rules', () => {
  const both = (startDate: string, count: number) => ({
    anniversary: hebrew(run({ frequency: 'Annually_Hebrew', startDate, count })),
    yahrzeit: hebrew(run({ frequency: 'Annually_Hebrew', startDate, count, anniversaryRule: 'yahrzeit' })),
  });

  test('plain Adar: Adar II in a leap year (anniversary), Adar I (yahrzeit, as hebcal)', () => {
    expect(both('2026-03-04', 3)).toEqual({
      anniversary: ['15 Adar 5786', '15 Adar II 5787', '15 Adar 5788'],
      yahrzeit: ['15 Adar 5786', '15 Adar I 5787', '15 Adar 5788'],
    });
  });

  test('Adar II stays in the last Adar; Adar I 1–29 → Adar in common years', () => {
    expect(both('2027-03-24', 4)).toEqual({
      anniversary: ['15 Adar II 5787', '15 Adar 5788', '15 Adar 5789', '15 Adar II 5790'],
      yahrzeit: ['15 Adar II 5787', '15 Adar 5788', '15 Adar 5789', '15 Adar II 5790'],
    });
    expect(both('2027-02-22', 2).anniversary).toEqual(['15 Adar I 5787', '15 Adar 5788']);
  });

  test('30 Adar I: anniversary 1 Nisan, yahrzeit 30 Sh’vat in a common year', () => {
    expect(both('2027-03-09', 2)).toEqual({
      anniversary: ['30 Adar I 5787', '1 Nisan 5788'],
      yahrzeit: ['30 Adar I 5787', "30 Sh'vat 5788"],
    });
  });

  test('30 Cheshvan / 30 Kislev, first anniversary without day 30: yahrzeit on the last day', () => {
    // 5784 and 5790 have a 29-day Cheshvan and Kislev; 5786 a 29-day Cheshvan; the other years 30-day ones.
    // Anniversary: the 1st of the next month when day 30 is missing. Yahrzeit (hebcal): the day before
    // 1 Kislev / 1 Tevet, i.e. the last day of the month, every year (checked against `hebcal -Y`).
    expect(both('2022-11-24', 4)).toEqual({
      anniversary: ['30 Cheshvan 5783', '1 Kislev 5784', '30 Cheshvan 5785', '1 Kislev 5786'],
      yahrzeit: ['30 Cheshvan 5783', '29 Cheshvan 5784', '30 Cheshvan 5785', '29 Cheshvan 5786'],
    });
    const kislev = both('2022-12-24', 8);
    expect(kislev.anniversary).toEqual([
      '30 Kislev 5783',
      '1 Tevet 5784',
      '30 Kislev 5785',
      '30 Kislev 5786',
      '30 Kislev 5787',
      '30 Kislev 5788',
      '30 Kislev 5789',
      '1 Tevet 5790',
    ]);
    expect(kislev.yahrzeit).toEqual([
      '30 Kislev 5783',
      '29 Kislev 5784',
      '30 Kislev 5785',
      '30 Kislev 5786',
      '30 Kislev 5787',
      '30 Kislev 5788',
      '30 Kislev 5789',
      '29 Kislev 5790',
    ]);
  });

  test('30 Cheshvan whose first anniversary has day 30: both rules give 1 Kislev in short years', () => {
    // 5788 has 30 Cheshvan; 5789 and 5790 do not (Calendrical Calculations' rule, as hebcal).
    const r = both('2026-11-10', 4);
    expect(r.anniversary).toEqual(['30 Cheshvan 5787', '30 Cheshvan 5788', '1 Kislev 5789', '1 Kislev 5790']);
    expect(r.yahrzeit).toEqual(r.anniversary);
  });
});

describe('Yizkor', () => {
  test('diaspora: Yom Kippur, Shmini Atzeret, Pesach VIII, Shavuot II', () => {
    const xs = run({ frequency: 'Yizkor', startDate: '2025-09-01', count: 6 });
    expect(hebrew(xs).slice(1)).toEqual([
      '10 Tishrei 5786',
      '22 Tishrei 5786',
      '22 Nisan 5786',
      '7 Sivan 5786',
      '10 Tishrei 5787',
    ]);
  });

  test('Israel: 21 Nisan and 6 Sivan', () => {
    const xs = run({ frequency: 'Yizkor', startDate: '2025-09-01', count: 5, il: true });
    expect(hebrew(xs).slice(1)).toEqual([
      '10 Tishrei 5786',
      '22 Tishrei 5786',
      '21 Nisan 5786',
      '6 Sivan 5786',
    ]);
  });

  test('instalments 2… are strictly after a start that is itself a Yizkor day', () => {
    const xs = run({ frequency: 'Yizkor', startDate: '2025-10-02', count: 2 });
    expect(nominal(xs)).toEqual(['2025-10-02', '2025-10-14']);
  });

  test('with the Shabbat/Yom Tov rule every Yizkor charge moves to the nearest permitted day before', () => {
    const dia = run({ frequency: 'Yizkor', startDate: '2025-09-01', count: 5, shabbatShift: true });
    expect(nominal(dia).slice(1)).toEqual(['2025-10-02', '2025-10-14', '2026-04-09', '2026-05-23']);
    // Erev Yom Kippur; Hoshana Raba; Pesach VIII → VII is Yom Tov too → 20 Nisan; Shavuot II (Shabbat)
    // → Shavuot I (Friday) → Erev Shavuot.
    expect(due(dia).slice(1)).toEqual(['2025-10-01', '2025-10-13', '2026-04-07', '2026-05-21']);
    expect(hebrew(dia).slice(1)).toEqual([
      '9 Tishrei 5786',
      '21 Tishrei 5786',
      '20 Nisan 5786',
      '5 Sivan 5786',
    ]);
    expect(dia.slice(1).every((i) => i.moved)).toBe(true);
    expect(dia[0]?.moved).toBe(false);
    const il = run({ frequency: 'Yizkor', startDate: '2025-09-01', count: 5, shabbatShift: true, il: true });
    expect(due(il).slice(1)).toEqual(['2025-10-01', '2025-10-13', '2026-04-07', '2026-05-21']);
    expect(nominal(il).slice(3)).toEqual(['2026-04-08', '2026-05-22']);
  });
});

describe('Special_Days', () => {
  const special = (presets: SpecialDayPreset[], startDate: string, count: number, dates: string[] = []) =>
    run({ frequency: 'Special_Days', startDate, count, specialDays: { presets, dates } });

  test('erev_shabbat: every Friday', () => {
    expect(nominal(special(['erev_shabbat'], '2026-01-07', 3))).toEqual([
      '2026-01-07',
      '2026-01-09',
      '2026-01-16',
    ]);
    // Starting on a Friday: the next one is a week later.
    expect(nominal(special(['erev_shabbat'], '2026-01-09', 2))).toEqual(['2026-01-09', '2026-01-16']);
  });

  test('rosh_chodesh: one charge, on the first day; erev_rosh_chodesh: the day before it', () => {
    // Rosh Chodesh Cheshvan 5786: 30 Tishrei + 1 Cheshvan; Kislev: 1 Kislev only; Tevet: 30 Kislev + 1 Tevet.
    expect(nominal(special(['rosh_chodesh'], '2025-09-01', 4))).toEqual([
      '2025-09-01',
      '2025-10-22',
      '2025-11-21',
      '2025-12-20',
    ]);
    expect(nominal(special(['erev_rosh_chodesh'], '2025-09-01', 4))).toEqual([
      '2025-09-01',
      '2025-10-21',
      '2025-11-20',
      '2025-12-19',
    ]);
  });

  test('fast_days: the six public fasts as hebcal places them (postponed Tish’a B’Av)', () => {
    expect(hebrew(special(['fast_days'], '2025-09-01', 7)).slice(1)).toEqual([
      '3 Tishrei 5786',
      '10 Tishrei 5786',
      '10 Tevet 5786',
      '13 Adar 5786',
      '17 Tamuz 5786',
      '9 Av 5786',
    ]);
    // 9 Av 5785 was Shabbat: the fast was on Sunday 10 Av (3 August 2025).
    expect(nominal(special(['fast_days'], '2025-07-20', 2))).toEqual(['2025-07-20', '2025-08-03']);
  });

  test('chanukah: each of the eight days', () => {
    expect(nominal(special(['chanukah'], '2025-12-01', 9)).slice(1)).toEqual([
      '2025-12-15',
      '2025-12-16',
      '2025-12-17',
      '2025-12-18',
      '2025-12-19',
      '2025-12-20',
      '2025-12-21',
      '2025-12-22',
    ]);
  });

  test('purim: 14 Adar (Adar II in a leap year), not Shushan Purim', () => {
    expect(hebrew(special(['purim'], '2025-12-01', 3)).slice(1)).toEqual(['14 Adar 5786', '14 Adar II 5787']);
  });

  test('presets and explicit dates: union, sorted, de-duplicated, strictly after the start', () => {
    const xs = special(['purim'], '2026-02-01', 5, [
      '2026-03-03', // Purim 5786 itself: counted once
      '2026-01-15', // before the start: ignored
      '2026-02-10',
      '2026-02-10',
      '2027-01-01',
    ]);
    expect(nominal(xs)).toEqual(['2026-02-01', '2026-02-10', '2026-03-03', '2027-01-01', '2027-03-23']);
  });

  test('explicit dates alone', () => {
    const xs = special([], '2026-02-01', 3, ['2026-05-01', '2026-04-01']);
    expect(nominal(xs)).toEqual(['2026-02-01', '2026-04-01', '2026-05-01']);
  });
});

describe('Shabbat and Yom Tov rule', () => {
  test('Daily: Friday and Shabbat are both due on Friday; Rosh Hashana moves to Erev Rosh Hashana', () => {
    const xs = run({ frequency: 'Daily', startDate: '2025-09-18', count: 9, shabbatShift: true });
    expect(due(xs)).toEqual([
      '2025-09-18',
      '2025-09-19',
      '2025-09-19',
      '2025-09-21',
      '2025-09-22',
      '2025-09-22',
      '2025-09-22',
      '2025-09-25',
      '2025-09-26',
    ]);
    expect(xs.map((i) => i.moved)).toEqual([false, false, true, false, false, true, true, false, false]);
    expect(nominal(xs)[2]).toBe('2025-09-20');
  });

  test('a start date on Shabbat moves instalment 1 to Friday', () => {
    const [first] = run({ frequency: 'Monthly', startDate: '2026-01-10', count: 1, shabbatShift: true });
    expect(first).toMatchObject({ nominalDate: '2026-01-10', dueDate: '2026-01-09', moved: true });
  });

  test('diaspora second days of Yom Tov move in the diaspora only', () => {
    // Simchat Torah 5786 (23 Tishrei, Wednesday 15 October 2025) is Yom Tov only outside Israel.
    const dia = run({ frequency: 'Monthly', startDate: '2025-10-15', count: 1, shabbatShift: true });
    const il = run({ frequency: 'Monthly', startDate: '2025-10-15', count: 1, shabbatShift: true, il: true });
    expect(due(dia)).toEqual(['2025-10-13']);
    expect(due(il)).toEqual(['2025-10-15']);
  });

  test('with the rule off nothing moves', () => {
    const xs = run({ frequency: 'Daily', startDate: '2025-09-18', count: 9 });
    expect(xs.every((i) => !i.moved && i.dueDate === i.nominalDate)).toBe(true);
  });
});

describe('amounts and shape', () => {
  test('instalment 1 = firstMinor, the rest perPaymentMinor, sequences 1…n', () => {
    const xs = run({ frequency: 'Weekly', startDate: '2026-01-05', count: 4 });
    expect(xs.map((i) => i.amountMinor)).toEqual([5000, 1800, 1800, 1800]);
    expect(xs.map((i) => i.sequence)).toEqual([1, 2, 3, 4]);
    expect(xs.reduce((s, i) => s + i.amountMinor, 0)).toBe(5000 + 1800 * 3);
  });

  test('count 1 is the start date for every frequency', () => {
    for (const frequency of [
      'Daily',
      'Weekly',
      'Every_3rd_week',
      'Every_4th_week',
      'Monthly',
      'Every_2nd_month',
      'Every_3rd_month',
      'Annually',
      'Monthly_Hebrew',
      'Every_2nd_Hebrew_month',
      'Every_3rd_Hebrew_month',
      'Annually_Hebrew',
      'Yizkor',
    ] as const) {
      expect(nominal(run({ frequency, startDate: '2026-06-17', count: 1 }))).toEqual(['2026-06-17']);
    }
  });

  test('Hebrew dates of the due date, in English and Hebrew letters', () => {
    const [first] = run({ frequency: 'Monthly', startDate: '2026-09-26', count: 1 });
    expect(first?.hebrewDate).toBe('15 Tishrei 5787');
    expect(first?.hebrewDateHebrew).toBe('ט״ו תִּשְׁרֵי תשפ״ז');
    expect(hebrewDateOf('2026-09-26')).toEqual({ en: '15 Tishrei 5787', he: 'ט״ו תִּשְׁרֵי תשפ״ז' });
  });

  test('the result does not depend on previous calls (memoisation is invisible)', () => {
    const t: ScheduleTerms = {
      ...base,
      frequency: 'Yizkor',
      startDate: '2030-01-01',
      count: 7,
      shabbatShift: true,
    };
    expect(computeInstalments(t)).toEqual(computeInstalments({ ...t }));
  });
});

describe('impossible terms', () => {
  test('each names its field', () => {
    expect(termsError({ frequency: 'Fortnightly' as never }).field).toBe('frequency');
    expect(termsError({ startDate: '2026-02-30' }).field).toBe('startDate');
    expect(termsError({ startDate: '2026-1-5' }).field).toBe('startDate');
    expect(termsError({ count: 0 }).field).toBe('count');
    expect(termsError({ count: 2.5 }).field).toBe('count');
    expect(termsError({ count: 10_001 }).field).toBe('count');
    expect(termsError({ firstMinor: 10.5 }).field).toBe('firstMinor');
    expect(termsError({ perPaymentMinor: 0 }).field).toBe('perPaymentMinor');
    expect(termsError({ anniversaryRule: 'birthday' as never }).field).toBe('anniversaryRule');
  });

  test('Special_Days without presets or dates', () => {
    const e = termsError({ frequency: 'Special_Days' });
    expect(e.field).toBe('specialDays');
    expect(termsError({ frequency: 'Special_Days', specialDays: { presets: [], dates: [] } }).field).toBe(
      'specialDays',
    );
    expect(
      termsError({ frequency: 'Special_Days', specialDays: { presets: ['lag_baomer' as never], dates: [] } })
        .field,
    ).toBe('specialDays.presets');
    expect(
      termsError({ frequency: 'Special_Days', specialDays: { presets: [], dates: ['tomorrow'] } }).field,
    ).toBe('specialDays.dates');
  });

  test('fewer occurrences than count within 200 years', () => {
    const few = termsError({
      frequency: 'Special_Days',
      count: 3,
      specialDays: { presets: [], dates: ['2026-03-01', '2025-01-01'] },
    });
    expect(few.field).toBe('count');
    expect(few.message).toMatch(/only 2 Special_Days dates within 200 years/);
    expect(termsError({ frequency: 'Yizkor', count: 1000 }).field).toBe('count');
    expect(termsError({ frequency: 'Annually', count: 202 }).field).toBe('count');
    expect(termsError({ frequency: 'Annually_Hebrew', count: 250 }).field).toBe('count');
    expect(termsError({ frequency: 'Every_3rd_month', count: 1000 }).field).toBe('count');
    expect(run({ frequency: 'Annually', startDate: '2026-01-01', count: 201 }).at(-1)?.nominalDate).toBe(
      '2226-01-01',
    );
    expect(run({ frequency: 'Daily', startDate: '2026-01-01', count: 10_000 })).toHaveLength(10_000);
    expect(termsError({ frequency: 'Daily', startDate: '9999-12-30', count: 3 }).field).toBe('count');
  });

  test('the error is an Error with a readable message', () => {
    const e = termsError({ count: -1 });
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('ScheduleTermsError');
    expect(e.message).toMatch(/^count: /);
  });
});
