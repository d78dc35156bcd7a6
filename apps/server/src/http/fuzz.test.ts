/**
 * Property-based fuzzing of the External API: thousands of generated BAD bodies thrown at every
 * endpoint through the real Hono app and a real database. For each one the answer must be the
 * 4xx the decisions prescribe (never a 5xx), with exactly `{ error: { errorCode, message, fields? } }`;
 * a 400 lists `{ field, message }` pairs naming the broken field; and NOTHING is written (row
 * counts and a digest of every row of the business tables are unchanged after each request).
 *
 * Generators live in `fuzz-arbitraries.ts`: each starts from a valid body and breaks exactly one
 * thing. `FUZZ_SCALE=5` multiplies the number of runs for a deeper search; `FUZZ_STATS=1` prints
 * how often each kind of mutation ran and what it was answered.
 */
import { randomUUID } from 'node:crypto';
import {
  chargeRequest,
  issuesToFields,
  saveCampaignRequest,
  saveCollectorRequest,
  saveDonorRequest,
  saveReasonRequest,
  scheduleRequest,
  voidRequest,
} from '@kupah/contracts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { civilDateIn } from '../orgs/settings.ts';
import { createHarness, type Harness, type Reply, testDatabases } from '../testing/harness.ts';
import {
  applyMutation,
  type Base,
  campaignBase,
  campaignMutations,
  chargeBase,
  chargeMutations,
  type Expected,
  getPath,
  invalid,
  type Mutation,
  type Path,
  pathName,
  personBase,
  personMutations,
  reasonBase,
  reasonMutations,
  type Seeds,
  scheduleBase,
  scheduleMutations,
  set,
  voidBase,
  voidMutations,
  withFreshKey,
} from './fuzz-arbitraries.ts';

const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
const BODY_LIMIT = 64 * 1024;
const TIMEOUT = 180_000;
const TZ = 'America/New_York';

/** Tables whose rows a rejected request must leave untouched. */
const TABLES = [
  'payments',
  'payment_reasons',
  'schedules',
  'donors',
  'collectors',
  'reasons',
  'campaigns',
  'idempotency_keys',
  'outbox_events',
] as const;

/** Row counts of every table, plus one digest of all their rows and of the orgs' number counters. */
const SNAPSHOT_SQL = `SELECT ${TABLES.map((t) => `(SELECT count(*)::int FROM ${t}) AS ${t}`).join(', ')},
  md5(${TABLES.map((t) => `coalesce((SELECT string_agg(x::text, '|' ORDER BY x::text) FROM ${t} x), '')`).join(" || '#' || ")}
    || '#' || coalesce((SELECT string_agg(campaign_counter || ',' || reason_counter, ';' ORDER BY id) FROM orgs), '')) AS digest`;

type EndpointName =
  | 'Charge'
  | 'SchedulePayment'
  | 'VoidPayment'
  | 'SaveDonor'
  | 'SaveCollector'
  | 'SaveReason'
  | 'SaveCampaign';

type AuthKind = 'source' | 'key' | 'either';

interface Endpoint {
  method: 'POST' | 'PUT';
  path: string;
  auth: AuthKind;
  schema: z.ZodType;
  base: (s: Seeds) => fc.Arbitrary<Base>;
  mutations: (s: Seeds, b: Base) => fc.Arbitrary<Mutation>;
}

const ENDPOINTS: Record<EndpointName, Endpoint> = {
  Charge: {
    method: 'POST',
    path: '/v1/External/Charge',
    auth: 'source',
    schema: chargeRequest,
    base: chargeBase,
    mutations: chargeMutations,
  },
  SchedulePayment: {
    method: 'POST',
    path: '/v1/External/SchedulePayment',
    auth: 'either',
    schema: scheduleRequest,
    base: scheduleBase,
    mutations: scheduleMutations,
  },
  VoidPayment: {
    method: 'POST',
    path: '/v1/External/VoidPayment',
    auth: 'either',
    schema: voidRequest,
    base: voidBase,
    mutations: voidMutations,
  },
  SaveDonor: {
    method: 'PUT',
    path: '/V1/External/SaveDonor',
    auth: 'key',
    schema: saveDonorRequest,
    base: (s) => personBase(s, 'donor'),
    mutations: (s, b) => personMutations(s, b as Parameters<typeof personMutations>[1]),
  },
  SaveCollector: {
    method: 'PUT',
    path: '/V1/External/SaveCollector',
    auth: 'key',
    schema: saveCollectorRequest,
    base: (s) => personBase(s, 'collector'),
    mutations: (s, b) => personMutations(s, b as Parameters<typeof personMutations>[1]),
  },
  SaveReason: {
    method: 'PUT',
    path: '/V1/External/SaveReason',
    auth: 'key',
    schema: saveReasonRequest,
    base: reasonBase,
    mutations: reasonMutations,
  },
  SaveCampaign: {
    method: 'PUT',
    path: '/V1/External/SaveCampaign',
    auth: 'key',
    schema: saveCampaignRequest,
    base: campaignBase,
    mutations: campaignMutations,
  },
};
const NAMES = Object.keys(ENDPOINTS) as EndpointName[];

/** A generated request: plain data, so fast-check prints a failing one in full. */
interface Case {
  endpoint: EndpointName;
  label: string;
  body: unknown;
  headers: Record<string, string>;
  expect: Expected;
}

describe.each(await testDatabases())('External API fuzz on %s', (kind) => {
  let h: Harness;
  let s: Seeds;
  let other: { orgGuid: string; apiKey: string; sourceGuid: string };
  let revoked: { apiKey: string; sourceGuid: string };
  /** The last known state of the tables: a rejected request must leave it as it is. */
  let baseline: Record<string, unknown>;

  const runs = (pglite: number) =>
    Math.max(1, Math.round((kind === 'pglite' ? pglite : pglite * 0.4) * SCALE));
  const source = () => ({ authorization: h.org.sourceGuid });
  const key = () => ({ apikey: h.org.apiKey });
  const goodAuth = (a: AuthKind): fc.Arbitrary<Record<string, string>> =>
    a === 'source'
      ? fc.constantFrom(source(), { authorization: `Bearer ${h.org.sourceGuid}` })
      : a === 'key'
        ? fc.constant(key())
        : fc.constantFrom(source(), key());

  const snapshot = async () => (await h.db.query<Record<string, unknown>>(SNAPSHOT_SQL))[0]!;

  async function send(c: Pick<Case, 'endpoint' | 'body' | 'headers'>): Promise<Reply> {
    const ep = ENDPOINTS[c.endpoint];
    return h.request(ep.method, ep.path, withFreshKey(c.body), c.headers);
  }

  /** After each request: a 2xx moves the baseline; anything else must have written nothing. */
  async function expectNothingWrittenUnless2xx(r: Reply, what: string) {
    expect(r.status, `5xx for ${what}: ${JSON.stringify(r.body)}`).toBeLessThan(500);
    const now = await snapshot();
    if (r.status >= 200 && r.status < 300) baseline = now;
    else expect(now, `rows written by a ${r.status} answer to ${what}`).toEqual(baseline);
  }

  /** The error body: exactly `{ error: { errorCode, message, fields? } }`, with the expected status, code and field. */
  function expectError(r: Reply, exp: Expected, what: string) {
    const shown = `${what} → ${r.status} ${JSON.stringify(r.body)}`;
    expect([exp.status, ...(exp.orStatus ?? [])], shown).toContain(r.status);
    expect(r.body !== null && typeof r.body === 'object' && !Array.isArray(r.body), shown).toBe(true);
    expect(Object.keys(r.body), shown).toEqual(['error']);
    const e = r.body.error;
    expect(e !== null && typeof e === 'object', shown).toBe(true);
    for (const k of Object.keys(e)) expect(['errorCode', 'message', 'fields'], shown).toContain(k);
    expect(typeof e.errorCode, shown).toBe('string');
    expect(typeof e.message === 'string' && e.message.length > 0, shown).toBe(true);
    if (r.status === exp.status) expect(exp.codes, shown).toContain(e.errorCode);
    if (r.status === 400) {
      expect(Array.isArray(e.fields) && e.fields.length > 0, shown).toBe(true);
      for (const f of e.fields) {
        expect(Object.keys(f).sort(), shown).toEqual(['field', 'message']);
        expect(typeof f.field === 'string' && f.field.length > 0, shown).toBe(true);
        expect(typeof f.message === 'string' && f.message.length > 0, shown).toBe(true);
      }
      if (exp.field !== undefined && r.status === exp.status) {
        const want = [exp.field].flat();
        const related = (f: { field: string }) =>
          want.some((w) => f.field === w || f.field.startsWith(`${w}.`));
        expect(e.fields.some(related), `${shown}: no field names ${want}`).toBe(true);
        expect(e.fields.every(related), `${shown}: fields other than ${want} named`).toBe(true);
      }
    } else {
      expect(e.fields, shown).toBeUndefined();
    }
    if (exp.message) {
      const all = [e.message, ...(e.fields ?? []).map((f: { message: string }) => f.message)].join(' | ');
      expect(all, shown).toContain(exp.message);
    }
  }

  async function check(c: Case) {
    const r = await send(c);
    const what = `${c.endpoint} [${c.label}]`;
    await expectNothingWrittenUnless2xx(r, what);
    expectError(r, c.expect, what);
    return r;
  }

  /** Bodies of one endpoint with one mutation each. */
  const mutated = (name: EndpointName): fc.Arbitrary<Case> => {
    const ep = ENDPOINTS[name];
    return ep.base(s).chain((b) =>
      fc.record({ m: ep.mutations(s, b), headers: goodAuth(ep.auth) }).map(({ m, headers }) => ({
        endpoint: name,
        label: m.label,
        body: applyMutation(b.body, m),
        headers,
        expect: m.expect,
      })),
    );
  };

  /** A property over cases, with the table snapshot taken before and compared after the run. */
  async function property(arb: fc.Arbitrary<Case>, numRuns: number) {
    baseline = await snapshot();
    const before = baseline;
    let sawWrite = false;
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(arb, async (c) => {
        const r = await check(c);
        if (r.status < 300) sawWrite = true;
        const k = `${c.endpoint} ${c.label} → ${r.status}`;
        seen.set(k, (seen.get(k) ?? 0) + 1);
      }),
      { numRuns },
    );
    if (!sawWrite) expect(await snapshot()).toEqual(before);
    if (process.env.FUZZ_STATS)
      console.log(
        [...seen]
          .sort()
          .map(([k, n]) => `${String(n).padStart(5)} ${k}`)
          .join('\n'),
      );
  }

  beforeAll(async () => {
    h = await createHarness(kind);
    const ok = (r: Reply, what: string) => {
      expect(r.status, `${what}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
      return r.body;
    };
    // GBP is switched off so that "currency not enabled" can be fuzzed too.
    ok(
      await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
        rateLimit: { perSecond: 100_000, burst: 1_000_000 },
        currencies: ['USD', 'ILS', 'EUR', 'CAD'],
        timezone: TZ,
      }),
      'settings',
    );
    other = ok(await h.admin('POST', '/orgs', { name: 'Other Org' }), 'other org');
    ok(
      await h.admin('PATCH', `/orgs/${other.orgGuid}/settings`, {
        rateLimit: { perSecond: 100_000, burst: 1_000_000 },
      }),
      'other settings',
    );
    const k = ok(await h.admin('POST', `/orgs/${h.org.orgGuid}/api-keys`, { sandbox: true }), 'key');
    const src = ok(
      await h.admin('POST', `/orgs/${h.org.orgGuid}/sources`, {
        name: 'Old',
        kind: 'external',
        sandbox: true,
      }),
      'source',
    );
    ok(await h.admin('POST', `/orgs/${h.org.orgGuid}/api-keys/revoke`, { apiKey: k.apiKey }), 'revoke key');
    ok(
      await h.admin('POST', `/orgs/${h.org.orgGuid}/sources/revoke`, { sourceGuid: src.sourceGuid }),
      'revoke source',
    );
    revoked = { apiKey: k.apiKey, sourceGuid: src.sourceGuid };
    const otherCollector = ok(
      await h.request(
        'PUT',
        '/V1/External/SaveCollector',
        { orgGuid: other.orgGuid, collectorID: '', firstName: 'Other', lastName: 'Collector' },
        { apikey: other.apiKey },
      ),
      'other collector',
    );

    const orgGuid = h.org.orgGuid;
    const put = (path: string, body: unknown) => h.request('PUT', path, body, { apikey: h.org.apiKey });
    const post = (path: string, body: unknown) =>
      h.request('POST', path, body, { authorization: h.org.sourceGuid });
    const campaign = ok(
      await put('/V1/External/SaveCampaign', { orgGuid, campaignNumber: 0, campaignName: 'Seed campaign' }),
      'campaign',
    );
    const reason = ok(
      await put('/V1/External/SaveReason', { orgGuid, reasonNumber: 0, reasonName: 'Seed reason' }),
      'reason',
    );
    const spare = ok(
      await put('/V1/External/SaveReason', { orgGuid, reasonNumber: 0, reasonName: 'Spare reason' }),
      'spare reason',
    );
    const locked = ok(
      await put('/V1/External/SaveReason', {
        orgGuid,
        reasonNumber: 0,
        reasonName: 'Locked reason',
        campaignNum: campaign.campaignNumber,
      }),
      'locked reason',
    );
    const donor = ok(
      await put('/V1/External/SaveDonor', { orgGuid, donorID: '', firstName: 'Seed', lastName: 'Donor' }),
      'donor',
    );
    const collector = ok(
      await put('/V1/External/SaveCollector', {
        orgGuid,
        collectorID: '',
        firstName: 'Seed',
        lastName: 'Collector',
      }),
      'collector',
    );
    const now = h.clock.now;
    const year = Number(civilDateIn(now, 'UTC').slice(0, 4));
    const goodExpiry = `12/${String((year + 3) % 100).padStart(2, '0')}`;
    const card = (ccNum: string) => ({ ccNum, expiry: goodExpiry, cvv: '123' });
    const charge = (over: Record<string, unknown>) =>
      post('/v1/External/Charge', {
        orgGUID: orgGuid,
        amount: 7,
        paymentMethodId: 'Credit_Card',
        currency: 'USD',
        uniqueTransactionId: `seed-${randomUUID()}`,
        card: card('4242424242424242'),
        ...over,
      });
    const chargeKey = `seed-${randomUUID()}`;
    const success = ok(await charge({ uniqueTransactionId: chargeKey }), 'success charge');
    expect(success.paymentStatus).toBe('Success');
    const declined = ok(await charge({ card: card('4000000000000002') }), 'declined charge');
    expect(declined.paymentStatus).toBe('Declined');
    const otherPayment = ok(
      await h.request(
        'POST',
        '/v1/External/Charge',
        {
          orgGUID: other.orgGuid,
          amount: 5,
          paymentMethodId: 'Credit_Card',
          currency: 'USD',
          uniqueTransactionId: `seed-${randomUUID()}`,
          card: card('4242424242424242'),
        },
        { authorization: other.sourceGuid },
      ),
      'charge in the other org',
    );
    expect(otherPayment.paymentStatus).toBe('Success');
    const chargeGuidKey = randomUUID();
    ok(await charge({ uniqueTransactionId: chargeGuidKey }), 'charge with a GUID key');
    const futureStart = civilDateIn(new Date(now.getTime() + 30 * 86_400_000), TZ);
    const scheduleKey = randomUUID();
    const sched = ok(
      await post('/v1/External/SchedulePayment', {
        orgGUID: orgGuid,
        amount: 120,
        paymentMethodId: 'Credit_Card',
        currency: 'USD',
        uniqueTransactionId: scheduleKey,
        card: card('4242424242424242'),
        scheduleDetails: {
          frequencyID: 'Monthly',
          startDate: futureStart,
          totalPaymentsCount: 12,
          amountPerPayment: 10,
        },
      }),
      'schedule',
    );
    expect(sched.paymentStatus).toBe('Success');
    s = {
      orgGuid,
      goodExpiry,
      year,
      donorId: donor.donorId,
      collectorId: collector.collectorId,
      reasonNum: reason.reasonNumber,
      spareReasonNum: spare.reasonNumber,
      lockedReasonNum: locked.reasonNumber,
      campaignNum: campaign.campaignNumber,
      successReceipt: success.receiptNum,
      declinedReceipt: declined.receiptNum,
      otherOrgReceipt: otherPayment.receiptNum,
      otherOrgCollectorId: otherCollector.collectorId,
      chargeKey,
      chargeGuidKey,
      scheduleKey,
      today: civilDateIn(now, TZ),
      futureStart,
      pastDate: civilDateIn(new Date(now.getTime() - 2 * 86_400_000), TZ),
    };
  });
  afterAll(async () => {
    await h?.close();
  });

  it('the base bodies are valid (so each mutation is the only fault): sampled ones are accepted', async () => {
    for (const name of NAMES) {
      const ep = ENDPOINTS[name];
      for (const b of fc.sample(ep.base(s), { numRuns: 6 })) {
        let body = b.body;
        if (name === 'VoidPayment') {
          // a payment of its own, so that the shared one stays voidable for the fuzzing below
          const paid = await h.request(
            'POST',
            '/v1/External/Charge',
            { ...fc.sample(chargeBase(s), 1)[0]!.body, reasons: null, campaign: null, collectorId: null },
            source(),
          );
          expect(paid.body.paymentStatus).toBe('Success');
          body = { ...body, receiptNum: paid.body.receiptNum };
        }
        for (const headers of fc.sample(goodAuth(ep.auth), 1)) {
          const r = await send({ endpoint: name, body, headers });
          expect(r.status, `${name} ${JSON.stringify(body)} → ${JSON.stringify(r.body)}`).toBe(200);
          if ('paymentStatus' in r.body) expect(['Success', 'Voided']).toContain(r.body.paymentStatus);
        }
      }
    }
  });

  it(
    'Charge: one broken field → 4xx naming it, nothing written',
    async () => {
      await property(mutated('Charge'), runs(400));
    },
    TIMEOUT,
  );

  it(
    'SchedulePayment: one broken field or inconsistent amounts → 4xx naming it, nothing written',
    async () => {
      await property(mutated('SchedulePayment'), runs(400));
    },
    TIMEOUT,
  );

  it(
    'VoidPayment: bad bodies → 400/403/404/409, nothing voided',
    async () => {
      await property(mutated('VoidPayment'), runs(200));
    },
    TIMEOUT,
  );

  it(
    'SaveDonor and SaveCollector: bad bodies → 400 naming the field (or 403/404), nothing saved',
    async () => {
      await property(fc.oneof(mutated('SaveDonor'), mutated('SaveCollector')), runs(300));
    },
    TIMEOUT,
  );

  it(
    'SaveReason and SaveCampaign: bad bodies → 400 naming the field (or 403/404), nothing saved',
    async () => {
      await property(fc.oneof(mutated('SaveReason'), mutated('SaveCampaign')), runs(300));
    },
    TIMEOUT,
  );

  it(
    'a missing, unknown, revoked or wrong-kind credential is 401; another org’s credential is 403',
    async () => {
      const unauthorized = (ep: Endpoint): fc.Arbitrary<Record<string, string>> => {
        const options: fc.Arbitrary<Record<string, string>>[] = [
          fc.constant({}),
          fc.uuid().map((g) => ({ authorization: g })),
          fc.uuid().map((g) => ({ authorization: `Bearer ${g}` })),
          fc.string({ maxLength: 40 }).map((x) => ({ authorization: x, apikey: x })),
          fc.constant({ apikey: revoked.apiKey }),
          fc.constant({ authorization: revoked.sourceGuid }),
        ];
        if (ep.auth === 'source') options.push(fc.constant({ apikey: h.org.apiKey }));
        if (ep.auth === 'key') options.push(fc.constant({ authorization: h.org.sourceGuid }));
        return fc.oneof(...options);
      };
      const arb = fc.constantFrom(...NAMES).chain((name) => {
        const ep = ENDPOINTS[name];
        const otherCreds: Record<string, string>[] =
          ep.auth === 'source'
            ? [{ authorization: other.sourceGuid }]
            : ep.auth === 'key'
              ? [{ apikey: other.apiKey }]
              : [{ authorization: other.sourceGuid }, { apikey: other.apiKey }];
        return fc.record({
          endpoint: fc.constant(name),
          body: ep.base(s).map((b) => b.body),
          auth: fc.oneof(
            { weight: 4, arbitrary: unauthorized(ep).map((headers) => ({ headers, status: 401 as const })) },
            {
              weight: 1,
              arbitrary: fc.constantFrom(...otherCreds).map((headers) => ({ headers, status: 403 as const })),
            },
          ),
        });
      });
      await property(
        arb.map(({ endpoint, body, auth }) => ({
          endpoint,
          body,
          headers: auth.headers,
          label: auth.status === 401 ? 'bad credential' : 'credential of another org',
          expect: { status: auth.status, codes: [auth.status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN'] },
        })),
        runs(150),
      );
    },
    TIMEOUT,
  );

  it(
    'random JSON as the whole body, or at any field: the answer agrees with the contract schema, never 5xx',
    async () => {
      const KEYS = [
        ...new Set(
          NAMES.flatMap((n) => fc.sample(ENDPOINTS[n].base(s), 3).flatMap((b) => Object.keys(b.body))),
        ),
        'scheduleDetails',
        'reason',
      ];
      const value = fc.oneof(
        { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
        fc.constant(s.orgGuid),
        fc.uuid(),
        fc.constantFrom(0, 1, 10, 18, '', ' ', 'USD', 'Credit_Card', 'Monthly', s.futureStart, '12/30', null),
      );
      /** Every path of a body (objects and arrays, at every depth). */
      const paths = (v: unknown, at: Path = []): Path[] =>
        v !== null && typeof v === 'object'
          ? Object.entries(v).flatMap(([k, x]) => {
              const p = [...at, Array.isArray(v) ? Number(k) : k];
              return [p, ...paths(x, p)];
            })
          : [];
      const arb = fc.constantFrom(...NAMES).chain((name) => {
        const ep = ENDPOINTS[name];
        const body = fc.oneof(
          fc.jsonValue({ maxDepth: 4 }),
          fc.dictionary(fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 10 })), value, {
            maxKeys: 14,
          }),
          ep
            .base(s)
            .chain((b) =>
              fc
                .tuple(fc.constantFrom(...paths(b.body)), value)
                .map(([p, v]) => applyMutation(b.body, { ops: [set(p, v)] })),
            ),
        );
        return fc.record({ endpoint: fc.constant(name), body, headers: goodAuth(ep.auth) });
      });
      baseline = await snapshot();
      await fc.assert(
        fc.asyncProperty(arb, async (c) => {
          const r = await send(c);
          const what = `${c.endpoint} with ${JSON.stringify(c.body)?.slice(0, 300)}`;
          await expectNothingWrittenUnless2xx(r, what);
          const parsed = ENDPOINTS[c.endpoint].schema.safeParse(c.body);
          if (!parsed.success) {
            const unknown = parsed.error.issues.some((i) => i.code === 'unrecognized_keys');
            expectError(r, { status: 400, codes: [unknown ? 'UNKNOWN_FIELD' : 'VALIDATION_FAILED'] }, what);
            const want = [...new Set(issuesToFields(parsed.error.issues).map((f) => f.field))].sort();
            const got = [...new Set((r.body.error.fields as { field: string }[]).map((f) => f.field))].sort();
            expect(got, what).toEqual(want);
          } else if (r.status >= 400) {
            expectError(
              r,
              { status: r.status as Expected['status'], codes: [r.body?.error?.errorCode] },
              what,
            );
          } else {
            expect(r.status, what).toBe(200);
          }
        }),
        { numRuns: runs(350) },
      );
    },
    TIMEOUT,
  );

  it(
    'bodies that are not JSON → 400 naming (body); JSON sent as another media type → 400/415',
    async () => {
      const notJson = fc
        .oneof(
          fc.string(),
          fc.string({ unit: 'binary', maxLength: 60 }),
          fc.constantFrom(
            '',
            ' ',
            '{',
            '}',
            '{"a":',
            "{'orgGUID':1}",
            '{"amount":18,}',
            '[1,]',
            'undefined',
            'NaN',
            'True',
            '{"a":1}{"b":2}',
            '\u0000',
            '\uFEFF{}x',
            '{"amount": 018}',
            '{"a":"\\x41"}',
            '<xml/>',
            'orgGUID=1&amount=2',
          ),
        )
        .filter((t) => {
          try {
            JSON.parse(t);
            return false;
          } catch {
            return true;
          }
        });
      const arb = fc.constantFrom(...NAMES).chain((name) =>
        fc.oneof(
          fc.record({
            endpoint: fc.constant(name),
            body: notJson,
            headers: fc
              .tuple(
                goodAuth(ENDPOINTS[name].auth),
                fc.constantFrom('application/json', 'application/json; charset=utf-8'),
              )
              .map(([a, ct]) => ({ ...a, 'content-type': ct })),
            label: fc.constant('not JSON'),
            expect: fc.constant(invalid('(body)')),
          }),
          fc.record({
            endpoint: fc.constant(name),
            body: ENDPOINTS[name].base(s).map((b) => JSON.stringify(b.body)),
            headers: fc
              .tuple(
                goodAuth(ENDPOINTS[name].auth),
                fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/xml'),
              )
              .map(([a, ct]) => ({ ...a, 'content-type': ct })),
            label: fc.constant('valid JSON under another media type'),
            expect: fc.constant({ ...invalid('(body)'), orStatus: [415] }),
          }),
        ),
      );
      await property(arb, runs(200));
    },
    TIMEOUT,
  );

  it(
    'bodies over 64 KiB → 413 PAYLOAD_TOO_LARGE (before any other check), nothing written',
    async () => {
      const arb = fc.constantFrom(...NAMES).chain((name) =>
        fc
          .record({
            base: ENDPOINTS[name].base(s),
            bytes: fc.integer({ min: BODY_LIMIT + 1, max: 3 * BODY_LIMIT }),
            pad: fc.constantFrom('x', 'א', '😀', ' ', '"'),
            form: fc.constantFrom('json', 'junk', 'array'),
            headers: fc.oneof(goodAuth(ENDPOINTS[name].auth), fc.constant({})),
          })
          .map(({ base, bytes, pad, form, headers }) => {
            const fill = (n: number) => pad.repeat(Math.ceil(n / Buffer.byteLength(pad)));
            const body =
              form === 'json'
                ? JSON.stringify({ ...base.body, note: fill(bytes) })
                : form === 'array'
                  ? JSON.stringify(Array.from({ length: Math.ceil(bytes / 8) }, (_, i) => i + 1_000_000))
                  : fill(bytes);
            return {
              endpoint: name,
              body,
              headers: { ...headers, 'content-type': 'application/json' },
              label: `${form} body of ${Buffer.byteLength(body)} bytes`,
              expect: { status: 413 as const, codes: ['PAYLOAD_TOO_LARGE'] },
            };
          }),
      );
      await property(arb, runs(60));
    },
    TIMEOUT,
  );

  it(
    'at every position of every body: an unknown field, a lone surrogate or a duplicated key is a 400 naming it, and nothing is written',
    async () => {
      /** Every object path of a body (where a key can be added), and every string path. */
      const objects = (v: unknown, at: Path = []): Path[] =>
        v !== null && typeof v === 'object'
          ? [
              ...(Array.isArray(v) ? [] : [at]),
              ...Object.entries(v).flatMap(([k, x]) => objects(x, [...at, Array.isArray(v) ? Number(k) : k])),
            ]
          : [];
      const strings = (v: unknown, at: Path = []): Path[] =>
        typeof v === 'string'
          ? [at]
          : v !== null && typeof v === 'object'
            ? Object.entries(v).flatMap(([k, x]) => strings(x, [...at, Array.isArray(v) ? Number(k) : k]))
            : [];
      const arb = fc.constantFrom(...NAMES).chain((name) =>
        ENDPOINTS[name].base(s).chain((b) => {
          const fresh = withFreshKey(b.body) as Record<string, unknown>;
          const inObjects = objects(fresh);
          const inStrings = strings(fresh).filter((p) => p.length > 0);
          const unknownField = fc
            .tuple(fc.constantFrom(...inObjects), fc.constantFrom('fuzzExtra', 'ccNumber', 'donorNum', 'x'))
            .map(([p, key]) => ({
              label: 'unknown field',
              body: applyMutation(fresh, { ops: [set([...p, key], 1)] }),
              expect: { status: 400, codes: ['UNKNOWN_FIELD'], field: pathName([...p, key]) } as Expected,
            }));
          const cases: fc.Arbitrary<{ label: string; body: unknown; expect: Expected }>[] = [unknownField];
          if (inStrings.length > 0) {
            cases.push(
              fc
                .tuple(fc.constantFrom(...inStrings), fc.constantFrom('\ud800', '\udfff', 'a\udc00b'))
                .map(([p, lone]) => ({
                  label: 'lone surrogate',
                  body: applyMutation(fresh, {
                    ops: [set(p, `${String(getPath(fresh, p)).slice(0, 5)}${JSON.parse(`"${lone}"`)}`)],
                  }),
                  expect: invalid(pathName(p)),
                })),
            );
          }
          // A key of the body given twice in the JSON text (the second with another value).
          const duplicated = fc.constantFrom(...Object.keys(fresh)).map((key) => ({
            label: 'duplicated key',
            body: JSON.stringify(fresh).replace(
              /}$/,
              `,${JSON.stringify(key)}:${JSON.stringify(fresh[key])}}`,
            ),
            expect: invalid(key),
          }));
          cases.push(duplicated);
          return fc
            .oneof(...cases)
            .chain((c) =>
              goodAuth(ENDPOINTS[name].auth).map((headers) => ({ endpoint: name, headers, ...c }) as Case),
            );
        }),
      );
      await property(arb, runs(150));
    },
    TIMEOUT,
  );

  it('the body limit is exactly 64 KiB: 65,536 bytes are read, 65,537 are refused', async () => {
    const body = (bytes: number) => {
      const start = JSON.stringify({ orgGUID: s.orgGuid, note: '' });
      return JSON.stringify({ orgGUID: s.orgGuid, note: 'x'.repeat(bytes - Buffer.byteLength(start)) });
    };
    baseline = await snapshot();
    const at = await send({ endpoint: 'Charge', body: body(BODY_LIMIT), headers: source() });
    await expectNothingWrittenUnless2xx(at, '64 KiB');
    expectError(at, { status: 400, codes: ['VALIDATION_FAILED'] }, '64 KiB');
    const over = await send({ endpoint: 'Charge', body: body(BODY_LIMIT + 1), headers: source() });
    await expectNothingWrittenUnless2xx(over, '64 KiB + 1');
    expectError(over, { status: 413, codes: ['PAYLOAD_TOO_LARGE'] }, '64 KiB + 1');
  });

  // ---------------------------------------------------------------------------------------------
  // Edge classes the fuzzing turned up, each a property of its own so that one failure cannot hide
  // another: over-deep JSON, backdated schedules, U+0000, sub-cent amounts, out-of-range dates.

  it(
    'deeply nested JSON within 64 KiB (in an unknown key, in a field, or as the body) is never a 5xx',
    async () => {
      const nested = fc
        .record({ depth: fc.integer({ min: 500, max: 9_000 }), shape: fc.constantFrom('array', 'object') })
        .map(({ depth, shape }) =>
          shape === 'array'
            ? `${'['.repeat(depth * 3)}${']'.repeat(depth * 3)}`
            : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
        );
      const arb = fc.constantFrom(...NAMES).chain((name) =>
        fc.record({
          endpoint: fc.constant(name),
          base: ENDPOINTS[name].base(s),
          nested,
          where: fc.constantFrom('unknown key', 'known field', 'whole body'),
          headers: goodAuth(ENDPOINTS[name].auth),
        }),
      );
      baseline = await snapshot();
      await fc.assert(
        fc.asyncProperty(arb, async ({ endpoint, base, nested, where, headers }) => {
          const fresh = JSON.stringify(withFreshKey(base.body));
          const field = Object.keys(base.body).find((k) => k !== base.orgKey)!;
          const body =
            where === 'whole body'
              ? nested
              : where === 'unknown key'
                ? fresh.replace(/}$/, `,"fuzzExtra":${nested}}`)
                : fresh.replace(/}$/, `,${JSON.stringify(field)}:${nested}}`);
          const r = await send({ endpoint, body, headers });
          const what = `${endpoint}: ${Buffer.byteLength(body)}-byte body, nesting in ${where === 'known field' ? field : where}`;
          await expectNothingWrittenUnless2xx(r, what);
          expectError(
            r,
            where === 'whole body'
              ? // an array is not an object; an object of "a" keys is an unknown field
                { status: 400, codes: ['VALIDATION_FAILED', 'UNKNOWN_FIELD'] }
              : where === 'unknown key'
                ? { status: 400, codes: ['UNKNOWN_FIELD'], field: 'fuzzExtra' }
                : invalid(field),
            what,
          );
        }),
        { numRuns: runs(60) },
      );
    },
    TIMEOUT,
  );

  it(
    'a schedule cannot start in the past by claiming an old deviceInfo.deviceCreatedDate (beyond the 72 h offline window)',
    async () => {
      const day = 86_400_000;
      const arb = fc
        .tuple(scheduleBase(s), fc.integer({ min: 4, max: 40_000 }), fc.boolean())
        .map(([b, daysBack, withTime]) => {
          const taken = new Date(h.clock.now.getTime() - daysBack * day);
          const start = civilDateIn(taken, TZ);
          return {
            endpoint: 'SchedulePayment' as const,
            label: `start ${start}, taken on the device ${daysBack} days ago`,
            body: applyMutation(b.body, {
              ops: [
                set(['scheduleDetails', 'startDate'], start),
                set(['deviceInfo'], {
                  deviceName: 'Fuzz terminal',
                  deviceCreatedDate: withTime ? taken.toISOString() : taken.toISOString().slice(0, 10),
                }),
              ],
            }),
            headers: source(),
            expect: invalid(['scheduleDetails.startDate', 'deviceInfo.deviceCreatedDate']),
          };
        })
        .filter((c) => (getPath(c.body, ['scheduleDetails', 'startDate']) as string) >= '1900-01-02');
      await property(arb, runs(40));
    },
    TIMEOUT,
  );

  it(
    'a text field containing U+0000 (which PostgreSQL cannot store) is a 400 naming it, not a 500',
    async () => {
      const stringPaths = (v: unknown, at: Path = []): Path[] =>
        typeof v === 'string'
          ? [at]
          : v !== null && typeof v === 'object'
            ? Object.entries(v).flatMap(([k, x]) => stringPaths(x, [...at, Array.isArray(v) ? Number(k) : k]))
            : [];
      const arb = fc.constantFrom(...NAMES).chain((name) =>
        ENDPOINTS[name].base(s).chain((b) =>
          fc
            .record({
              path: fc.constantFrom(...stringPaths(b.body)),
              at: fc.nat(),
              headers: goodAuth(ENDPOINTS[name].auth),
            })
            .map(({ path, at, headers }) => {
              const old = String(getPath(b.body, path));
              const i = at % (old.length + 1);
              return {
                endpoint: name,
                label: `U+0000 in ${pathName(path)}`,
                body: applyMutation(b.body, { ops: [set(path, `${old.slice(0, i)}\u0000${old.slice(i)}`)] }),
                headers,
                expect: invalid(pathName(path)),
              };
            }),
        ),
      );
      await property(arb, runs(150));
    },
    TIMEOUT,
  );

  it(
    'a positive amount too small to be a cent (e.g. 1e-9) is a 400 naming it, never a 0.00 payment, part or instalment',
    async () => {
      const tiny = fc.oneof(
        fc.constantFrom(Number.MIN_VALUE, 1e-9, 1e-10, 4e-9),
        fc.double({ min: Number.MIN_VALUE, max: 4.9e-9, noNaN: true }),
      );
      const sd = (k: string): Path => ['scheduleDetails', k];
      const arb = fc.oneof(
        fc.tuple(chargeBase(s), tiny).map(([b, v]) => ({
          endpoint: 'Charge' as const,
          label: 'tiny amount',
          body: applyMutation(b.body, { ops: [set(['amount'], v), set(['reasons'], null)] }),
          headers: source(),
          expect: invalid('amount'),
        })),
        fc.tuple(chargeBase(s), tiny).map(([b, v]) => ({
          endpoint: 'Charge' as const,
          label: 'tiny reason part',
          body: applyMutation(b.body, {
            ops: [set(['reasons', 0, 'reasonAmount'], 18), set(['reasons', 1, 'reasonAmount'], v)],
          }),
          headers: source(),
          expect: invalid('reasons.1.reasonAmount'),
        })),
        fc.tuple(scheduleBase(s), tiny).map(([b, v]) => ({
          endpoint: 'SchedulePayment' as const,
          label: 'tiny amountPerPayment',
          body: applyMutation(b.body, {
            ops: [set(sd('amountPerPayment'), v), set(['amount'], 10), set(['reasons'], null)],
          }),
          headers: key(),
          expect: invalid('scheduleDetails.amountPerPayment'),
        })),
        fc.tuple(scheduleBase(s), tiny).map(([b, v]) => ({
          endpoint: 'SchedulePayment' as const,
          label: 'tiny total of a one-payment schedule',
          body: applyMutation(b.body, {
            ops: [
              set(['amount'], v),
              set(sd('totalPaymentsCount'), 1),
              set(sd('amountPerPayment'), null),
              set(sd('firstPaymentAmount'), null),
              set(['reasons'], null),
            ],
          }),
          headers: key(),
          expect: invalid('amount'),
        })),
        fc.tuple(scheduleBase(s), tiny).map(([b, v]) => ({
          endpoint: 'SchedulePayment' as const,
          label: 'tiny total of a one-payment schedule starting today',
          body: applyMutation(b.body, {
            ops: [
              set(['amount'], v),
              set(sd('startDate'), s.today),
              set(sd('totalPaymentsCount'), 1),
              set(sd('amountPerPayment'), null),
              set(sd('firstPaymentAmount'), null),
              set(['reasons'], null),
            ],
          }),
          headers: key(),
          expect: invalid('amount'),
        })),
        fc.tuple(scheduleBase(s), tiny).map(([b, v]) => ({
          endpoint: 'SchedulePayment' as const,
          label: 'tiny reason part',
          body: applyMutation(b.body, {
            ops: [set(['reasons', 0, 'reasonAmount'], 10), set(['reasons', 1, 'reasonAmount'], v)],
          }),
          headers: key(),
          expect: invalid('reasons.1.reasonAmount'),
        })),
      );
      await property(arb, runs(100));
    },
    TIMEOUT,
  );

  it(
    'an amount a hair off a cent (e.g. 18.000000001) is refused, or charged AND answered as that cent',
    async () => {
      const arb = fc
        .tuple(
          chargeBase(s),
          fc.integer({ min: 1, max: 100_000_000 }),
          fc.double({ min: 1e-12, max: 9e-9, noNaN: true }),
          fc.boolean(),
        )
        .map(([b, cents, eps, up]) => ({ b, v: cents / 100 + (up ? eps : -eps) }))
        .filter(({ v }) => !/^\d+(\.\d{1,2})?$/.test(String(v)) && v <= 1_000_000);
      baseline = await snapshot();
      await fc.assert(
        fc.asyncProperty(arb, async ({ b, v }) => {
          const body = applyMutation(b.body, { ops: [set(['amount'], v), set(['reasons'], null)] });
          const r = await send({ endpoint: 'Charge', body, headers: source() });
          const what = `Charge with amount ${v}`;
          await expectNothingWrittenUnless2xx(r, what);
          if (r.status === 200) {
            const [row] = await h.db.query<{ amount_minor: string }>(
              'SELECT amount_minor FROM payments WHERE receipt_num = $1',
              [r.body.receiptNum],
            );
            const charged = Number(row!.amount_minor);
            expect(charged, what).toBe(Math.round(v * 100));
            expect(r.body.amount, `${what}: the answer says another amount than was charged`).toBe(
              charged / 100,
            );
          } else {
            expectError(r, invalid('amount'), what);
          }
        }),
        { numRuns: runs(40) },
      );
    },
    TIMEOUT,
  );

  it(
    'a paymentDate outside PostgreSQL’s range (year 0000, or past 9999 in UTC) is a 400 naming it, not a 500',
    async () => {
      const pad = (n: number, w = 2) => String(n).padStart(w, '0');
      const date = fc.oneof(
        fc
          .tuple(
            fc.integer({ min: 1, max: 12 }),
            fc.integer({ min: 1, max: 28 }),
            fc.integer({ min: 0, max: 23 }),
            fc.boolean(),
          )
          .map(([m, d, hh, withTime]) => `0000-${pad(m)}-${pad(d)}${withTime ? `T${pad(hh)}:00:00Z` : ''}`),
        fc
          .tuple(fc.integer({ min: 1, max: 14 }), fc.integer({ min: 0, max: 59 }))
          .map(([oh, om]) => `9999-12-31T23:59:59-${pad(oh)}:${pad(om)}`)
          .filter((t) => !t.endsWith('-00:00')),
      );
      const arb = fc.oneof(
        fc.tuple(chargeBase(s), date).map(([b, d]) => ({
          endpoint: 'Charge' as const,
          label: `paymentDate ${d}`,
          body: applyMutation(b.body, { ops: [set(['paymentDate'], d)] }),
          headers: source(),
          expect: invalid('paymentDate'),
        })),
        fc.tuple(scheduleBase(s), date).map(([b, d]) => ({
          endpoint: 'SchedulePayment' as const,
          label: `paymentDate ${d} of a schedule starting today`,
          body: applyMutation(b.body, {
            ops: [set(['paymentDate'], d), set(['scheduleDetails', 'startDate'], s.today)],
          }),
          headers: key(),
          expect: invalid('paymentDate'),
        })),
      );
      await property(arb, runs(60));
    },
    TIMEOUT,
  );
});
