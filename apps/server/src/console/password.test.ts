import { describe, expect, it } from 'vitest';
import {
  currentScryptParams,
  hashPassword,
  needsRehash,
  passwordProblem,
  SCRYPT_PARAMS,
  TEST_SCRYPT_PARAMS,
  useScryptParamsForTests,
  verifyPassword,
} from './password.ts';

describe('console passwords', () => {
  it('hash and verify: salted, parameters in the string, wrong and malformed refused', async () => {
    const a = await hashPassword('a long enough password');
    const b = await hashPassword('a long enough password');
    expect(a).not.toBe(b);
    expect(a.startsWith(`scrypt$${SCRYPT_PARAMS.N}$${SCRYPT_PARAMS.r}$${SCRYPT_PARAMS.p}$`)).toBe(true);
    expect(await verifyPassword('a long enough password', a)).toBe(true);
    expect(await verifyPassword('a long enough passwore', a)).toBe(false);
    expect(await verifyPassword('a long enough password', null)).toBe(false);
    expect(await verifyPassword('a long enough password', 'scrypt$1048576000$8$1$AAAA$BBBB')).toBe(false);
    expect(await verifyPassword('a long enough password', a.replace(/\$[\w-]+$/, '$AAAA'))).toBe(false);
    // Unicode normalised: the same password typed as composed or decomposed characters.
    const composed = await hashPassword('caf\u00e9 au lait, please');
    expect(await verifyPassword('cafe\u0301 au lait, please', composed)).toBe(true);
  }, 60_000);

  it('older parameters verify and ask for a re-hash', async () => {
    const old = await hashPassword('an older stored hash', { N: 2 ** 14, r: 8, p: 1 });
    expect(old.startsWith('scrypt$16384$8$1$')).toBe(true);
    expect(await verifyPassword('an older stored hash', old)).toBe(true);
    expect(needsRehash(old)).toBe(true);
    expect(needsRehash(await hashPassword('a current stored hash'))).toBe(false);
  }, 60_000);

  it("production's parameters by default (N=2^15, r=8, p=3), stored in the hash; cheaper ones only by a test's choice", async () => {
    expect(SCRYPT_PARAMS).toEqual({ N: 2 ** 15, r: 8, p: 3 });
    expect(currentScryptParams()).toBe(SCRYPT_PARAMS);
    expect(await hashPassword('the default parameters')).toMatch(/^scrypt\$32768\$8\$3\$/);
    useScryptParamsForTests(TEST_SCRYPT_PARAMS);
    try {
      const cheap = await hashPassword('cheap test parameters');
      expect(cheap).toMatch(/^scrypt\$1024\$8\$1\$/);
      expect(await verifyPassword('cheap test parameters', cheap)).toBe(true);
    } finally {
      useScryptParamsForTests(null);
    }
    expect(currentScryptParams()).toBe(SCRYPT_PARAMS);
    // Outside vitest the parameters cannot be changed.
    const vitest = process.env.VITEST;
    delete process.env.VITEST;
    try {
      expect(() => useScryptParamsForTests(TEST_SCRYPT_PARAMS)).toThrow(/tests only/);
    } finally {
      process.env.VITEST = vitest;
    }
    expect(currentScryptParams()).toBe(SCRYPT_PARAMS);
  }, 60_000);

  it('rules: 10 to 200 characters, not the e-mail address', () => {
    expect(passwordProblem('short', 'a@example.org')).toMatch(/at least 10/);
    expect(passwordProblem('x'.repeat(201), 'a@example.org')).toMatch(/at most 200/);
    expect(passwordProblem('Someone@Example.org', 'someone@example.org')).toMatch(/e-mail/);
    expect(passwordProblem('longlocalpart', 'longlocalpart@example.org')).toMatch(/e-mail/);
    expect(passwordProblem('a perfectly fine one', 'a@example.org')).toBeNull();
    expect(passwordProblem('🔑'.repeat(10), 'a@example.org')).toBeNull(); // characters, not UTF-16 units
  });
});
