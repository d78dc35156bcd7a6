import { describe, expect, it } from 'vitest';
import { parseSwipe } from './swipe.ts';

const TRACK1 = '%B4242424242424242^DOE/JOHN A^2512101000000000000000123000000?';
const TRACK2 = ';4242424242424242=25121010000012300000?';

describe('parseSwipe', () => {
  it('parses track 1', () => {
    expect(parseSwipe(TRACK1)).toEqual({
      pan: '4242424242424242',
      expiry: '12/25',
      cardHolderName: 'JOHN A DOE',
    });
  });

  it('parses track 2 (no name)', () => {
    expect(parseSwipe(TRACK2)).toEqual({ pan: '4242424242424242', expiry: '12/25', cardHolderName: null });
  });

  it('parses both tracks concatenated, with or without a line break', () => {
    const expected = { pan: '4242424242424242', expiry: '12/25', cardHolderName: 'JOHN A DOE' };
    expect(parseSwipe(TRACK1 + TRACK2)).toEqual(expected);
    expect(parseSwipe(`${TRACK1}\n${TRACK2}\r\n`)).toEqual(expected);
  });

  it('tolerates missing sentinels', () => {
    expect(parseSwipe('B4242424242424242^DOE/JOHN A^2512101')?.cardHolderName).toBe('JOHN A DOE');
    expect(parseSwipe('4242424242424242=2512101')).toEqual({
      pan: '4242424242424242',
      expiry: '12/25',
      cardHolderName: null,
    });
  });

  it('trims the name and handles names without a slash or with a blank name', () => {
    expect(parseSwipe('%B378282246310005^SMITH /  JANE   ^2701101?')?.cardHolderName).toBe('JANE SMITH');
    expect(parseSwipe('%B378282246310005^JANE SMITH^2701101?')?.cardHolderName).toBe('JANE SMITH');
    expect(parseSwipe('%B378282246310005^ /^2701101?')?.cardHolderName).toBeNull();
  });

  it('uses track 1 when track 2 failed to read', () => {
    expect(parseSwipe(`${TRACK1};E?`)?.pan).toBe('4242424242424242');
  });

  it.each([
    '',
    'hello world',
    '%E?;E?',
    '%B4242^DOE/JOHN^2512?',
    ';4242424242424242=2513101?',
    ';4242424242424242?',
    '%B4242424242424242^DOE/JOHN A^2500101?',
    `${TRACK1};5555555555554444=25121010000012300000?`,
    `%B4242424242424242^DOE/JOHN A^2612101?${TRACK2}`,
  ])('returns null for %j', (raw) => {
    expect(parseSwipe(raw)).toBeNull();
  });

  it('returns nothing from the discretionary data', () => {
    const out = JSON.stringify(parseSwipe(`${TRACK1}${TRACK2}`));
    expect(out).not.toContain('101');
    expect(out).not.toContain('123');
  });

  it('does not throw on non-strings', () => {
    expect(parseSwipe(undefined as never)).toBeNull();
  });
});
