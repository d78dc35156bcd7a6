import { describe, expect, it } from 'vitest';
import { last4, maskPan, maskSecret } from './mask.ts';

describe('last4', () => {
  it('returns the last four characters, ignoring spaces and dashes', () => {
    expect(last4('4242 4242 4242 1234')).toBe('1234');
    expect(last4('4242-4242-4242-12-34')).toBe('1234');
    expect(last4('tok_abcdefgh')).toBe('efgh');
    expect(last4('12')).toBe('12');
  });
});

describe('maskPan', () => {
  it('keeps only the last four digits', () => {
    expect(maskPan('4242424242424242')).toBe('************4242');
    expect(maskPan('378282246310005')).toBe('***********0005');
    expect(maskPan('4242 4242 4242 4242')).toBe('************4242');
  });

  it('fully stars short numbers', () => {
    expect(maskPan('1234567')).toBe('*******');
    expect(maskPan('')).toBe('');
  });

  it('never reveals more than four digits', () => {
    for (const pan of ['4111111111111111', '5555555555554444', '6011111111111117']) {
      expect(maskPan(pan).replace(/\*/g, '')).toHaveLength(4);
    }
  });
});

describe('maskSecret', () => {
  it('keeps the start and the end around ****', () => {
    expect(maskSecret('abcd1234567890wxyz')).toBe('abcd****wxyz');
    expect(maskSecret('3f2b8c1e-5d4a-4c7e-9b1f-2a6d8e0c4b71')).toBe('3f2b****4b71');
    expect(maskSecret('sk_live_0123456789abcdef', 8, 2)).toBe('sk_live_****ef');
    expect(maskSecret('0123456789abcdef', 0, 4)).toBe('****cdef');
  });

  it('fully stars values too short to keep half hidden', () => {
    expect(maskSecret('abcdefghijklmno')).toBe('***************');
    expect(maskSecret('abc')).toBe('***');
    expect(maskSecret('')).toBe('');
  });

  it('does not reveal the length of long secrets', () => {
    expect(maskSecret('a'.repeat(20))).toBe(maskSecret('a'.repeat(60)));
  });
});
