import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  addCivilMonths,
  civilDateIn,
  parseCivilDate,
  RD_UNIX_EPOCH,
  rdFromYmd,
  rdToCivil,
  weekdayOfRd,
  ymdFromRd,
} from './civil.ts';
import { isShabbatOrYomTov } from './index.ts';

describe('civilDateIn', () => {
  test('one instant, two orgs: Jerusalem is already on the next day, Los Angeles is not', () => {
    const instant = new Date('2026-03-01T23:30:00Z');
    expect(civilDateIn(instant, 'Asia/Jerusalem')).toBe('2026-03-02');
    expect(civilDateIn(instant, 'America/Los_Angeles')).toBe('2026-03-01');
    expect(civilDateIn(instant, 'UTC')).toBe('2026-03-01');
  });

  test('early UTC morning is still yesterday in Los Angeles', () => {
    const instant = new Date('2026-03-01T05:00:00Z');
    expect(civilDateIn(instant, 'America/Los_Angeles')).toBe('2026-02-28');
    expect(civilDateIn(instant, 'Asia/Jerusalem')).toBe('2026-03-01');
  });

  test('across daylight-saving changes', () => {
    // Israel moves to summer time on Friday 27 March 2026 at 02:00.
    expect(civilDateIn(new Date('2026-03-26T22:30:00Z'), 'Asia/Jerusalem')).toBe('2026-03-27');
    expect(civilDateIn(new Date('2026-03-27T21:30:00Z'), 'Asia/Jerusalem')).toBe('2026-03-28');
    // US summer time ends on 1 November 2026.
    expect(civilDateIn(new Date('2026-11-01T07:30:00Z'), 'America/Los_Angeles')).toBe('2026-11-01');
    expect(civilDateIn(new Date('2026-11-01T06:30:00Z'), 'America/Los_Angeles')).toBe('2026-10-31');
  });

  test('agrees with the UTC date in UTC for any instant', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2200, 0, 1) }), (t) => {
        expect(civilDateIn(new Date(t), 'UTC')).toBe(new Date(t).toISOString().slice(0, 10));
      }),
    );
  });

  test('rejects an unknown zone and an invalid Date', () => {
    expect(() => civilDateIn(new Date(), 'Mars/Olympus_Mons')).toThrow(RangeError);
    expect(() => civilDateIn(new Date(Number.NaN), 'UTC')).toThrow(RangeError);
  });
});

describe('day numbers', () => {
  test('R.D. of known days', () => {
    expect(rdFromYmd(1970, 1, 1)).toBe(RD_UNIX_EPOCH);
    expect(rdFromYmd(1, 1, 1)).toBe(1);
    expect(weekdayOfRd(rdFromYmd(2026, 1, 10))).toBe(6); // Saturday
    expect(weekdayOfRd(rdFromYmd(2026, 1, 9))).toBe(5); // Friday
  });

  test('round trip and agreement with Date.UTC', () => {
    fc.assert(
      fc.property(fc.integer({ min: rdFromYmd(1000, 1, 1), max: rdFromYmd(9999, 12, 31) }), (rd) => {
        const { year, month, day } = ymdFromRd(rd);
        expect(rdFromYmd(year, month, day)).toBe(rd);
        expect(parseCivilDate(rdToCivil(rd))).toBe(rd);
        const utc = new Date(0);
        utc.setUTCFullYear(year, month - 1, day);
        expect(Math.round(utc.getTime() / 86_400_000) + RD_UNIX_EPOCH).toBe(rd);
        expect(weekdayOfRd(rd)).toBe(utc.getUTCDay());
      }),
      { numRuns: 2000 },
    );
  });

  test('parseCivilDate accepts real dates only', () => {
    expect(parseCivilDate('2028-02-29')).not.toBeNull();
    for (const bad of [
      '2027-02-29',
      '2026-13-01',
      '2026-00-10',
      '2026-04-31',
      '26-01-01',
      '2026-01-01T00:00',
      '',
    ]) {
      expect(parseCivilDate(bad)).toBeNull();
    }
  });

  test('addCivilMonths clamps to the month end from the original day', () => {
    expect(rdToCivil(addCivilMonths(2026, 1, 31, 1))).toBe('2026-02-28');
    expect(rdToCivil(addCivilMonths(2026, 1, 31, 2))).toBe('2026-03-31');
    expect(rdToCivil(addCivilMonths(2026, 11, 30, 3))).toBe('2027-02-28');
    expect(rdToCivil(addCivilMonths(2028, 2, 29, 12))).toBe('2029-02-28');
    expect(rdToCivil(addCivilMonths(2028, 2, 29, 48))).toBe('2032-02-29');
  });
});

describe('isShabbatOrYomTov', () => {
  test('Shabbat and Yom Tov, per Israel or the diaspora', () => {
    expect(isShabbatOrYomTov('2026-01-10', false)).toBe(true); // Shabbat
    expect(isShabbatOrYomTov('2026-01-07', false)).toBe(false); // a Wednesday
    expect(isShabbatOrYomTov('2025-10-02', true)).toBe(true); // Yom Kippur
    expect(isShabbatOrYomTov('2025-10-14', true)).toBe(true); // Shmini Atzeret
    expect(isShabbatOrYomTov('2025-10-15', false)).toBe(true); // Simchat Torah (diaspora)
    expect(isShabbatOrYomTov('2025-10-15', true)).toBe(false);
    expect(isShabbatOrYomTov('2026-04-09', false)).toBe(true); // Pesach VIII
    expect(isShabbatOrYomTov('2026-04-09', true)).toBe(false);
    expect(isShabbatOrYomTov('2025-12-16', false)).toBe(false); // Chanukah is not Yom Tov
    expect(isShabbatOrYomTov('2026-03-03', false)).toBe(false); // nor is Purim
  });

  test('rejects a malformed date', () => {
    expect(() => isShabbatOrYomTov('2026-02-30', false)).toThrow(RangeError);
  });
});
