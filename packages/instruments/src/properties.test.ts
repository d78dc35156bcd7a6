import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateCard } from './card.ts';
import { maskPan } from './mask.ts';

const NOW = new Date('2025-06-15T12:00:00Z');

describe('properties', () => {
  it('maskPan never contains any 5-digit run of a 13–19-digit number', () => {
    const digits = fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: 13, maxLength: 19 });
    fc.assert(
      fc.property(digits, (pan) => {
        const masked = maskPan(pan);
        expect(masked).toHaveLength(pan.length);
        for (let i = 0; i + 5 <= pan.length; i++) {
          expect(masked).not.toContain(pan.slice(i, i + 5));
        }
      }),
    );
  });

  it('validateCard never throws and never echoes a long card number', () => {
    const str = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }));
    const field = fc.option(str, { nil: undefined });
    fc.assert(
      fc.property(field, field, field, fc.boolean(), (ccNum, expiry, cvv, requireCvv) => {
        const result = validateCard({ ccNum, expiry, cvv }, NOW, { requireCvv });
        if (!result.ok) {
          expect(result.errors.length).toBeGreaterThan(0);
          const digits = (ccNum ?? '').replace(/\D/g, '');
          if (digits.length >= 12) {
            for (const e of result.errors) expect(e.message.replace(/\D/g, '')).not.toContain(digits);
          }
        }
      }),
    );
  });
});
