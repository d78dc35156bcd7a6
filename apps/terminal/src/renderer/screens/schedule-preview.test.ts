import { describe, expect, it } from 'vitest';
import { schedulePreview } from './details-screen.tsx';

describe('the schedule preview follows the organisation’s Shabbat setting', () => {
  const amounts = { count: 2, firstMinor: 1800, perMinor: 1800, totalMinor: 3600 };
  const dues = (shabbatShift: boolean) => {
    const p = schedulePreview('Monthly', '2026-11-28', amounts, false, [], shabbatShift);
    if (!p || !('rows' in p)) throw new Error('no preview');
    return p.rows.map((r) => r.dueDate);
  };

  it('2026-11-28 is a Saturday: moved off Shabbat when the organisation moves instalments, kept when it does not', () => {
    expect(new Date('2026-11-28T12:00:00Z').getUTCDay()).toBe(6);
    expect(dues(true)[0]).not.toBe('2026-11-28');
    expect(dues(false)[0]).toBe('2026-11-28');
  });
});

describe('Annually_Hebrew: the anniversary or the yahrzeit custom', () => {
  it('a date in Adar of an ordinary year falls in a different Adar of the next (leap) year by the two customs', () => {
    const amounts = { count: 2, firstMinor: 1800, perMinor: 1800, totalMinor: 3600 };
    const dues = (rule: 'anniversary' | 'yahrzeit') => {
      const p = schedulePreview('Annually_Hebrew', '2026-03-01', amounts, false, [], false, rule);
      if (!p || !('rows' in p)) throw new Error('no preview');
      return p.rows.map((r) => r.dueDate);
    };
    const anniversary = dues('anniversary');
    const yahrzeit = dues('yahrzeit');
    expect(anniversary[0]).toBe(yahrzeit[0]);
    expect(anniversary[1]).not.toBe(yahrzeit[1]);
  });
});
