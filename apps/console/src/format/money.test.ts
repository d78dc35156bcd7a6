import { describe, expect, it } from 'vitest';
import { formatMinor, minorDigits, minorToInput, parseMajor } from './money.ts';

// Intl puts direction marks and no-break spaces around currency signs: compare without them.
const plain = (s: string) => s.replace(/[\u200e\u200f\u061c]/g, '').replace(/[\u00a0\u202f]/g, ' ');

describe('formatMinor', () => {
  it('shows minor units in English', () => {
    expect(formatMinor(123456, 'USD', 'en')).toBe('$1,234.56');
    expect(formatMinor(1800, 'ILS', 'en')).toBe('₪18.00');
    expect(formatMinor(5, 'USD', 'en')).toBe('$0.05');
    expect(formatMinor(-250, 'USD', 'en')).toBe('-$2.50');
  });

  it('shows minor units in Hebrew (the sign after the number)', () => {
    expect(plain(formatMinor(123456, 'ILS', 'he'))).toBe('1,234.56 ₪');
    expect(plain(formatMinor(1800, 'USD', 'he'))).toBe('18.00 $');
  });

  it('is exact for amounts beyond what a float keeps in cents', () => {
    expect(formatMinor(900719925474099, 'USD', 'en')).toBe('$9,007,199,254,740.99');
  });
});

describe('parseMajor', () => {
  it('parses decimal strings exactly, with no float drift', () => {
    expect(parseMajor('19.99', 'USD')).toEqual({ ok: true, minor: 1999 });
    expect(parseMajor('0.29', 'USD')).toEqual({ ok: true, minor: 29 });
    expect(parseMajor('1.005', 'USD')).toEqual({ ok: false, error: 'tooManyDecimals' });
    expect(parseMajor('4.35', 'ILS')).toEqual({ ok: true, minor: 435 });
    expect(parseMajor('18', 'ILS')).toEqual({ ok: true, minor: 1800 });
    expect(parseMajor('18.5', 'USD')).toEqual({ ok: true, minor: 1850 });
    expect(parseMajor('.5', 'USD')).toEqual({ ok: true, minor: 50 });
    expect(parseMajor('1,234.50', 'USD')).toEqual({ ok: true, minor: 123450 });
    expect(parseMajor(' 36 ', 'USD')).toEqual({ ok: true, minor: 3600 });
  });

  it('ignores the direction marks a Hebrew text field may carry', () => {
    expect(parseMajor('\u200f18.00\u200f', 'ILS')).toEqual({ ok: true, minor: 1800 });
  });

  it('refuses what is not an amount', () => {
    expect(parseMajor('', 'USD')).toEqual({ ok: false, error: 'empty' });
    expect(parseMajor('abc', 'USD')).toEqual({ ok: false, error: 'invalid' });
    expect(parseMajor('1,23', 'USD')).toEqual({ ok: false, error: 'invalid' });
    expect(parseMajor('-5', 'USD')).toEqual({ ok: false, error: 'invalid' });
    expect(parseMajor('1e3', 'USD')).toEqual({ ok: false, error: 'invalid' });
    expect(parseMajor('.', 'USD')).toEqual({ ok: false, error: 'invalid' });
  });

  it('refuses more than a maximum', () => {
    expect(parseMajor('10.01', 'USD', 1000)).toEqual({ ok: false, error: 'tooLarge' });
    expect(parseMajor('10.00', 'USD', 1000)).toEqual({ ok: true, minor: 1000 });
    expect(parseMajor('99999999999999999', 'USD')).toEqual({ ok: false, error: 'tooLarge' });
  });

  it('round-trips every cent of a range through the input text', () => {
    for (let m = 0; m < 20_000; m += 37) {
      expect(parseMajor(minorToInput(m, 'USD'), 'USD')).toEqual({ ok: true, minor: m });
    }
  });

  it('knows each currency minor digits', () => {
    expect(minorDigits('USD')).toBe(2);
    expect(minorDigits('JPY')).toBe(0);
    expect(parseMajor('150', 'JPY')).toEqual({ ok: true, minor: 150 });
    expect(parseMajor('1.5', 'JPY')).toEqual({ ok: false, error: 'tooManyDecimals' });
  });
});
