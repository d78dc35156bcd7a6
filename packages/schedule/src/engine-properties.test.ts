import { FREQUENCIES, SPECIAL_DAY_PRESETS } from '@kupah/contracts';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { parseCivilDate, rdFromYmd, rdToCivil } from './civil.ts';
import { computeInstalments, hebrewDateOf, isShabbatOrYomTov, type ScheduleTerms } from './index.ts';

const civilDate = (fromYear: number, toYear: number) =>
  fc.integer({ min: rdFromYmd(fromYear, 1, 1), max: rdFromYmd(toYear, 12, 31) }).map(rdToCivil);

const termsArb: fc.Arbitrary<ScheduleTerms> = fc
  .record({
    frequency: fc.constantFrom(...FREQUENCIES),
    startDate: civilDate(1990, 2200),
    count: fc.integer({ min: 1, max: 40 }),
    firstMinor: fc.integer({ min: 1, max: 100_000_000 }),
    perPaymentMinor: fc.integer({ min: 1, max: 100_000_000 }),
    il: fc.boolean(),
    shabbatShift: fc.boolean(),
    presets: fc.subarray([...SPECIAL_DAY_PRESETS]),
    dates: fc.array(civilDate(1990, 2210), { maxLength: 6 }),
    anniversaryRule: fc.constantFrom(undefined, 'anniversary' as const, 'yahrzeit' as const),
  })
  .map(({ presets, dates, anniversaryRule, ...t }) => {
    const terms: ScheduleTerms = { ...t };
    if (t.frequency === 'Special_Days') {
      // At least one preset, so that there are always enough occurrences.
      terms.specialDays = { presets: presets.length ? presets : ['erev_shabbat'], dates };
    }
    if (anniversaryRule) terms.anniversaryRule = anniversaryRule;
    return terms;
  });

const prevDay = (date: string) => rdToCivil((parseCivilDate(date) as number) - 1);
const nextDay = (date: string) => rdToCivil((parseCivilDate(date) as number) + 1);

function permittedOnOrBefore(date: string, il: boolean): string {
  let d = date;
  while (isShabbatOrYomTov(d, il)) d = prevDay(d);
  return d;
}

describe('properties of every schedule', () => {
  test('count, sequences, amounts, strictly increasing nominal dates, Shabbat/Yom Tov rule', () => {
    fc.assert(
      fc.property(termsArb, (t) => {
        const xs = computeInstalments(t);
        expect(xs).toHaveLength(t.count);
        expect(xs.map((i) => i.sequence)).toEqual(Array.from({ length: t.count }, (_, i) => i + 1));
        expect(xs[0]?.nominalDate).toBe(t.startDate);
        const total = xs.reduce((s, i) => s + i.amountMinor, 0);
        expect(total).toBe(t.firstMinor + t.perPaymentMinor * (t.count - 1));
        expect(xs[0]?.amountMinor).toBe(t.firstMinor);
        const floor = t.shabbatShift ? permittedOnOrBefore(t.startDate, t.il) : t.startDate;
        for (let k = 0; k < xs.length; k++) {
          const i = xs[k]!;
          const prev = xs[k - 1];
          if (prev) {
            expect(i.nominalDate > prev.nominalDate).toBe(true);
            expect(i.dueDate >= prev.dueDate).toBe(true);
            if (!t.shabbatShift) expect(i.dueDate > prev.dueDate).toBe(true);
          }
          expect(i.dueDate >= floor).toBe(true);
          expect(i.hebrewDate).toBe(hebrewDateOf(i.dueDate).en);
          expect(i.hebrewDateHebrew).toBe(hebrewDateOf(i.dueDate).he);
          expect(i.moved).toBe(i.dueDate !== i.nominalDate);
          if (t.shabbatShift) {
            expect(isShabbatOrYomTov(i.dueDate, t.il)).toBe(false);
            // Nearest: every day after the due date up to the nominal date is Shabbat or Yom Tov.
            for (let d = nextDay(i.dueDate); d <= i.nominalDate; d = nextDay(d)) {
              expect(isShabbatOrYomTov(d, t.il)).toBe(true);
            }
          } else {
            expect(i.dueDate).toBe(i.nominalDate);
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  test('Hebrew-month frequencies keep the original Hebrew day (or the 1st after a missing 30th)', () => {
    fc.assert(
      fc.property(
        civilDate(1990, 2200),
        fc.constantFrom('Monthly_Hebrew', 'Every_2nd_Hebrew_month', 'Every_3rd_Hebrew_month') as fc.Arbitrary<
          ScheduleTerms['frequency']
        >,
        fc.integer({ min: 2, max: 30 }),
        (startDate, frequency, count) => {
          const xs = computeInstalments({
            frequency,
            startDate,
            count,
            firstMinor: 1,
            perPaymentMinor: 1,
            il: false,
            shabbatShift: false,
          });
          const day = Number(xs[0]?.hebrewDate.split(' ')[0]);
          for (const i of xs) {
            const d = Number(i.hebrewDate.split(' ')[0]);
            expect(d === day || (day === 30 && d === 1)).toBe(true);
          }
        },
      ),
    );
  });

  test('Yizkor days are always Yom Tov, so with the rule on every later instalment moves', () => {
    fc.assert(
      fc.property(civilDate(1990, 2200), fc.boolean(), (startDate, il) => {
        const xs = computeInstalments({
          frequency: 'Yizkor',
          startDate,
          count: 9,
          firstMinor: 1,
          perPaymentMinor: 1,
          il,
          shabbatShift: true,
        });
        for (const i of xs.slice(1)) {
          expect(isShabbatOrYomTov(i.nominalDate, il)).toBe(true);
          expect(i.moved).toBe(true);
        }
      }),
    );
  });
});
