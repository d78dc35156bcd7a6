import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.ts';
import { canonicalJson, MAX_JSON_DEPTH, requestHash, withoutSecrets } from './request-hash.ts';

const reversed = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(reversed)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v)
            .reverse()
            .map(([k, x]) => [k, reversed(x)]),
        )
      : v;

describe('request hash', () => {
  it('canonical JSON is valid JSON of the same value, whatever the key order', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const text = canonicalJson(v);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v)));
        expect(canonicalJson(reversed(v))).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it('is the same for another key order, different for another value, and keyed', () => {
    const a = { b: 1, a: [1, { y: 2, x: 'é' }] };
    const b = { a: [1, { x: 'é', y: 2 }], b: 1 };
    expect(requestHash(a, 'k')).toBe(requestHash(b, 'k'));
    expect(requestHash(a, 'k')).not.toBe(requestHash({ ...a, b: 2 }, 'k'));
    expect(requestHash(a, 'k')).not.toBe(requestHash(a, 'other key'));
  });

  it('refuses a body nested deeper than the limit with a 400, without recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => canonicalJson({ x: deep })).toThrow(ApiError);
    let ok: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH - 1; i++) ok = [ok];
    expect(() => canonicalJson({ x: ok })).not.toThrow();
  });

  it('never covers a CVV; card and account numbers only through their fingerprints', () => {
    const mac = (v: string) => createHmac('sha256', 'fingerprint key').update(v).digest('hex');
    const fp = {
      card: (n: string) => mac(n.replace(/\D/g, '')),
      bank: (r: string, a: string) => mac(`${r}:${a}`),
    };
    const body = (ccNum: string, cvv: string, accountNum = '000123456789') => ({
      amount: 18,
      card: { ccNum, cvv, expiry: '12/30' },
      bankAccount: { accountNum, routingNum: '021000021' },
    });
    const text = canonicalJson(withoutSecrets(body('4242424242424242', '737'), fp));
    expect(text).not.toContain('4242424242424242');
    expect(text).not.toContain('737');
    expect(text).not.toContain('000123456789');
    expect(requestHash(body('4242424242424242', '737'), 'k', fp)).toBe(
      requestHash(body('4242 4242 4242 4242', '001'), 'k', fp),
    );
    expect(requestHash(body('4242424242424242', '737'), 'k', fp)).not.toBe(
      requestHash(body('4111111111111111', '737'), 'k', fp),
    );
    expect(requestHash(body('4242424242424242', '737'), 'k', fp)).not.toBe(
      requestHash(body('4242424242424242', '737', '000999999999'), 'k', fp),
    );
    // Without fingerprints the numbers are left out entirely (never hashed in clear).
    expect(canonicalJson(withoutSecrets(body('4242424242424242', '737')))).not.toMatch(/4242|737|0001234/);
  });
});
