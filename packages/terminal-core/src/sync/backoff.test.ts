import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffCeilingMs, backoffDelayMs, SYNC_BACKOFF } from './backoff.ts';

describe('sync back-off', () => {
  it('the ceiling doubles from 1 s per failure and stops at 5 min', () => {
    expect([1, 2, 3, 4, 5, 9, 10, 50].map((n) => backoffCeilingMs(n))).toEqual([
      1_000, 2_000, 4_000, 8_000, 16_000, 256_000, 300_000, 300_000,
    ]);
  });

  it('full jitter: the wait is anywhere from 0 to the ceiling, following the random draw', () => {
    expect(backoffDelayMs(4, () => 0)).toBe(0);
    expect(backoffDelayMs(4, () => 0.5)).toBe(4_000);
    expect(backoffDelayMs(4, () => 0.999_999)).toBe(7_999);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, r) => {
          const d = backoffDelayMs(n, () => r);
          return d >= 0 && d <= backoffCeilingMs(n) && d <= SYNC_BACKOFF.maxMs;
        },
      ),
    );
  });

  it("a server's Retry-After is a floor (within the cap)", () => {
    expect(backoffDelayMs(1, () => 0, SYNC_BACKOFF, 30_000)).toBe(30_000);
    expect(backoffDelayMs(1, () => 0, SYNC_BACKOFF, 3_600_000)).toBe(300_000);
  });
});
