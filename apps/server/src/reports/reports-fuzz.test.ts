/**
 * Property-based fuzzing of the read API: generated query strings (known and unknown parameters,
 * hostile values: bad cursors, inverted ranges, huge limits, SQL-looking and LIKE-pattern text,
 * lone surrogates, invalid percent-encoding, repeated parameters) against every read endpoint,
 * through the real app and database. Every answer is a 200 or a 4xx with the error body naming a
 * parameter of the request, never a 5xx; and a query the contract refuses is never a 200.
 */
import { donorSearchQuery, paymentListQuery, totalsQuery } from '@kupah/contracts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';

const SCALE = Number(process.env.FUZZ_SCALE ?? 1);

const hostile = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-1',
    '1e309',
    '99999999999999999999',
    'NaN',
    'null',
    "' OR 1=1 --",
    '%',
    '_',
    '\\',
    "'; DROP TABLE payments; --",
    '2026-11-22',
    '2026-02-30',
    '2026-11-22T10:00:00Z',
    '2026-11-22T25:61:00Z',
    '1900-01-01',
    '2999-12-31',
    '10000-01-01',
    'D100001',
    'R100001',
    'Success',
    'Credit_Card',
    'USD',
    'day',
    'device',
    'x'.repeat(300),
    'שלום',
    '\u202Eevil',
    '\ud800',
    'a\udc00b',
    '\u0000',
    'ZmFrZQ',
    Buffer.from('2026-11-20T00:00:00.000000|1').toString('base64url'),
    Buffer.from('2026-13-40T00:00:00.000000|1').toString('base64url'),
    Buffer.from('d|1').toString('base64url'),
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
);

/** A value as it goes into the query string: usually encoded; sometimes raw, broken percent-encoding. */
const encoded = fc.oneof(
  { weight: 8, arbitrary: hostile.map((v) => encodeURIComponentLoose(v)) },
  { weight: 1, arbitrary: fc.constantFrom('%', '%E0%A4%A', '%ED%A0%80', '%FF', '%00', '%2', '+', '%2B') },
);

/** encodeURIComponent throws on lone surrogates: those go as the UTF-8 of U+FFFD would not; send raw bytes. */
function encodeURIComponentLoose(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return s
      .split('')
      .map((ch) => {
        const code = ch.charCodeAt(0);
        return code >= 0xd800 && code <= 0xdfff ? '%ED%A0%80' : encodeURIComponent(ch);
      })
      .join('');
  }
}

interface Endpoint {
  path: string;
  schema: z.ZodType;
  params: string[];
}

const ENDPOINTS: Record<string, Endpoint> = {
  payments: {
    path: '/v1/External/Payments',
    schema: paymentListQuery,
    params: Object.keys(paymentListQuery.shape),
  },
  totals: {
    path: '/v1/External/Reports/Totals',
    schema: totalsQuery,
    params: Object.keys(totalsQuery.shape),
  },
  donors: {
    path: '/v1/External/Donors',
    schema: donorSearchQuery,
    params: Object.keys(donorSearchQuery.shape),
  },
  payment: {
    path: '/v1/External/Payments/R100001',
    schema: paymentListQuery.pick({ orgGuid: true }),
    params: ['orgGuid', 'orgGUID'],
  },
  donor: {
    path: '/v1/External/Donors/D100001',
    schema: paymentListQuery.pick({ orgGuid: true }),
    params: ['orgGuid', 'orgGUID'],
  },
};

describe.each(await testDatabases())('read API fuzz on %s', (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(kind);
    const settings = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
      rateLimit: { perSecond: 100_000, burst: 1_000_000 },
    });
    expect(settings.status).toBe(200);
    h.clock.set('2026-11-20T15:00:00.000Z');
    for (const amount of [18, 36]) {
      await h.request(
        'POST',
        '/v1/External/Charge',
        chargeBody(h, { amount, donor: { firstName: 'Moshe', lastName: 'Cohen' } }),
        sourceAuth(h),
      );
    }
  });
  afterAll(async () => {
    await h?.close();
  });

  for (const [name, ep] of Object.entries(ENDPOINTS)) {
    it(`${name}: any query is a 200 or a 4xx naming a parameter, never a 5xx`, async () => {
      const param = fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(...ep.params) },
        { weight: 1, arbitrary: fc.constantFrom('sort', 'ORGGUID', 'limit[]', '', 'q\u0000', 'page') },
      );
      const query = fc.array(fc.tuple(param, encoded), { minLength: 0, maxLength: 5 });
      await fc.assert(
        fc.asyncProperty(query, async (pairs) => {
          const qs = pairs.map(([k, v]) => `${encodeURIComponentLoose(k)}=${v}`).join('&');
          const r = await h.request('GET', `${ep.path}${qs ? `?${qs}` : ''}`, undefined, keyAuth(h));
          const what = `${ep.path}?${qs} → ${r.status} ${JSON.stringify(r.body)?.slice(0, 300)}`;
          expect(r.status, what).toBeLessThan(500);
          if (r.status === 200) {
            // A 200 only for a query the contract accepts (the last value of a repeated parameter is
            // not silently taken: repeats are refused).
            // (a parameter without a name, `?=x`, is no parameter: the query parser drops it.)
            const decoded = new URLSearchParams(qs);
            decoded.delete('');
            const keys = [...decoded.keys()];
            expect(new Set(keys).size, what).toBe(keys.length);
            expect(ep.schema.safeParse(Object.fromEntries(decoded)).success, what).toBe(true);
            return;
          }
          expect([400, 403, 404], what).toContain(r.status);
          expect(Object.keys(r.body), what).toEqual(['error']);
          expect(typeof r.body.error.errorCode, what).toBe('string');
          if (r.status === 400) {
            expect(r.body.error.fields?.length, what).toBeGreaterThan(0);
          }
        }),
        { numRuns: Math.round(120 * SCALE) },
      );
    }, 120_000);
  }
});
