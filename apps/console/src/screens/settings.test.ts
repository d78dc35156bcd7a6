import { describe, expect, it } from 'vitest';
import { parsePresets } from './settings.tsx';

describe('quick amounts as typed', () => {
  it('are major units separated by spaces or commas, kept exactly in minor units', () => {
    expect(parsePresets('18 36 100', 'USD')).toEqual([1800, 3600, 10_000]);
    expect(parsePresets('18.00, 36.00, 54.00, 1,000.50', 'USD')).toEqual([1800, 3600, 5400, 100_050]);
    expect(parsePresets('0.29; 19.99', 'ILS')).toEqual([29, 1999]);
    expect(parsePresets('', 'USD')).toEqual([]);
  });
  it('refuse anything that is not a positive amount', () => {
    expect(parsePresets('18 abc', 'USD')).toBeNull();
    expect(parsePresets('18 0', 'USD')).toBeNull();
    expect(parsePresets('1.999', 'USD')).toBeNull();
  });
});
