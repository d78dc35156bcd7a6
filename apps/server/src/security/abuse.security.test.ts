/**
 * Card testing: an attacker holding a source credential (a source GUID from a public donation form,
 * or a device's credential) runs card numbers through Charge to learn which are good. The limits
 * stop the run before the gateway (counted here), and the rate limit is shared by every instance.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveFingerprintKey } from '../abuse/fingerprint.ts';
import { ChargeBlocked, guardCharge, purgeAbuseRecords, recordVerification } from '../abuse/limits.ts';
import { createOrg, createSource } from '../admin/admin-service.ts';
import { createApp } from '../app.ts';
import { hashCredential } from '../auth/credentials.ts';
import { findSourceCaller } from '../auth/repo.ts';
import { type Db, openDatabase } from '../db/database.ts';
import type { Gateway, GatewayResult } from '../gateway/gateway.ts';
import { staticGatewayRegistry } from '../gateway/registry.ts';
import { sandboxGateway } from '../gateway/sandbox-gateway.ts';
import { createMetrics } from '../http/metrics.ts';
import { purgeFullBuckets, tokenBuckets } from '../http/rate-limit.ts';
import { prepareInstrument } from '../payments/instrument.ts';
import { pairTestDevice, sealedOp } from '../testing/device-client.ts';
import { chargeBody, createHarness, type Harness, PG_URL, testDatabases } from '../testing/harness.ts';

/** A Luhn-valid 16-digit Visa number made from `seed` (never one of the sandbox's named cards). */
function visa(seed: number): string {
  const body = `4${String(seed).padStart(6, '0')}${String(seed * 7919)
    .padStart(8, '0')
    .slice(-8)}`;
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return `${body}${(10 - (sum % 10)) % 10}`;
}

/** The production gateway of these tests: declines every card but the approved ones, counts calls. */
function cardNetwork(approved: Set<string>) {
  const inner = sandboxGateway();
  const calls: string[] = [];
  const declined: GatewayResult = {
    status: 'Declined',
    gatewayRef: null,
    token: null,
    code: 'CARD_DECLINED',
    message: 'Do not honour',
  };
  /** The card's number, counted as a call; whether the network approves it. */
  const approves = (req: { instrument: Parameters<Gateway['authorize']>[0]['instrument'] }) => {
    const pan = 'card' in req.instrument ? req.instrument.card.pan : '';
    calls.push(pan);
    return approved.has(pan);
  };
  const gateway: Gateway = {
    ...inner,
    name: inner.name,
    authorize: async (req, opts) => (approves(req) ? inner.authorize(req, opts) : declined),
    // A schedule starting later verifies the card (charges nothing): same answers as a charge.
    tokenize: async (req, opts) => (approves(req) ? inner.tokenize(req, opts) : declined),
  };
  return { gateway, calls };
}

describe.each(await testDatabases())('card-testing limits on %s', (kind) => {
  let h: Harness;
  const good = visa(900_001);
  const network = cardNetwork(new Set([good]));
  let form: { sourceGuid: string };

  beforeAll(async () => {
    h = await createHarness(kind, {
      gateways: () => staticGatewayRegistry(sandboxGateway(), network.gateway),
    });
    // As the server derives it from its key-encryption key (not stored anywhere in the database).
    h.deps.fingerprintKey = deriveFingerprintKey(randomBytes(32));
    form = await createSource(h.db, h.org.orgGuid, 'Public donation form', 'external', false);
  });
  afterAll(async () => {
    await h?.close();
  });

  const charge = (auth: { sourceGuid: string }, ccNum: string, over: Record<string, unknown> = {}) =>
    h.request(
      'POST',
      '/v1/External/Charge',
      chargeBody(h, { card: { ccNum, expiry: '12/30', cvv: '123' }, ...over }),
      {
        authorization: auth.sourceGuid,
      },
    );
  const events = (kindOf: string) =>
    h.db.query<{ org_id: string; credential: string; kind: string; details: unknown }>(
      'SELECT org_id, credential, kind, details FROM security_events WHERE kind = $1 ORDER BY id',
      [kindOf],
    );

  it('50 cards from one source credential: stopped after 10 declines, the other 40 never reach the gateway', async () => {
    const cards = Array.from({ length: 50 }, (_, i) => visa(100_000 + i));
    const before = network.calls.length;
    const replies = [];
    for (const card of cards) replies.push(await charge(form, card));

    expect(replies.slice(0, 10).map((r) => [r.status, r.body.paymentStatus])).toEqual(
      Array.from({ length: 10 }, () => [200, 'Declined']),
    );
    for (const r of replies.slice(10)) {
      expect(r.status).toBe(429);
      expect(r.body.error.errorCode).toBe('TOO_MANY_DECLINES');
      expect(r.body.error.message).toMatch(/refused until/);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(60);
    }
    // The gateway saw exactly the first ten cards; none of the other forty.
    expect(network.calls.slice(before)).toEqual(cards.slice(0, 10));
    // No payment, no idempotency record for the refused ones (their ids may be sent after the cool-off).
    const [{ n }] = (await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM payments WHERE last4 = ANY($1::text[])`,
      [cards.slice(10).map((c) => c.slice(-4))],
    )) as [{ n: number }];
    expect(n).toBe(0);

    // One security event for the block, naming the credential, with no card data.
    const blocked = await events('card_testing_credential_blocked');
    expect(blocked).toHaveLength(1);
    expect(blocked[0]!.credential).toMatch(/^source:\d+$/);
    const text = JSON.stringify(blocked);
    for (const card of cards) {
      expect(text).not.toContain(card);
      expect(text).not.toContain(card.slice(-4));
    }
    expect(await h.deps.metrics.registry.getSingleMetricAsString('kupah_abuse_blocks_total')).toMatch(
      /kind="credential_declines"} 1/,
    );

    // The good card is refused too from that credential (the credential is blocked, not the cards)…
    const still = await charge(form, good);
    expect(still.status).toBe(429);
    // …while another source of the organisation charges as usual.
    const other = await createSource(h.db, h.org.orgGuid, 'Another form', 'external', false);
    expect((await charge(other, good)).body.paymentStatus).toBe('Success');
  });

  it("a device's pushed charges count too: past the limit each operation is refused before the gateway, to be sent again after the cool-off", async () => {
    const device = await pairTestDevice(h, 'Live kiosk', { sandbox: false });
    const before = network.calls.length;
    const results = [];
    for (let i = 0; i < 12; i++) {
      const op = await sealedOp(
        device,
        'charge',
        chargeBody(h, {
          uniqueTransactionId: undefined,
          card: { ccNum: visa(300_000 + i), expiry: '12/30', cvv: '123' },
        }),
      );
      const r = await device.push([op]);
      expect(r.status).toBe(200);
      results.push(r.body.results[0]);
    }
    expect(results.slice(0, 10).every((r) => r.status === 'Declined')).toBe(true);
    for (const r of results.slice(10)) {
      expect(r).toMatchObject({
        status: 'Error',
        retryable: true,
        error: { errorCode: 'TOO_MANY_DECLINES' },
      });
    }
    expect(network.calls.length - before).toBe(10);
  });

  it('SchedulePayment from a blocked credential is refused before the gateway too', async () => {
    const before = network.calls.length;
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York' }).format(h.clock.now);
    const r = await h.request(
      'POST',
      '/v1/External/SchedulePayment',
      chargeBody(h, {
        uniqueTransactionId: randomUUID(),
        amount: undefined,
        card: { ccNum: visa(777_001), expiry: '12/30', cvv: '123' },
        scheduleDetails: {
          frequencyID: 'Monthly',
          startDate: today,
          totalPaymentsCount: 2,
          amountPerPayment: 10,
        },
      }),
      { authorization: form.sourceGuid },
    );
    expect(r.status).toBe(429);
    expect(r.body.error.errorCode).toBe('TOO_MANY_DECLINES');
    expect(network.calls.length).toBe(before);
  });

  it('after the cool-off the credential charges again', async () => {
    const at = h.clock.now;
    h.clock.set(new Date(at.getTime() + 31 * 60_000).toISOString());
    try {
      const r = await charge(form, good);
      expect(r.status).toBe(200);
      expect(r.body.paymentStatus).toBe('Success');
    } finally {
      h.clock.set(at.toISOString());
    }
  });

  it('one card across the organisation: refused after 5 attempts or 3 declines, whichever source sends it', async () => {
    const org = await createOrg(h.db, 'Per-card org');
    const sources = await Promise.all(
      [1, 2, 3].map((i) => createSource(h.db, org.orgGuid, `Form ${i}`, 'external', false)),
    );
    const send = (i: number, ccNum: string) =>
      h.request(
        'POST',
        '/v1/External/Charge',
        chargeBody({ org }, { card: { ccNum, expiry: '12/30', cvv: '123' } }),
        { authorization: sources[i % 3]!.sourceGuid },
      );

    // Declines: the same card (a CVV or expiry being guessed) from three sources.
    const guessed = visa(555_123);
    const before = network.calls.length;
    const declined = [];
    for (let i = 0; i < 5; i++) declined.push(await send(i, guessed));
    expect(declined.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
    expect(declined[3]!.body.error.errorCode).toBe('CARD_TESTING_SUSPECTED');
    expect(Number(declined[3]!.headers.get('retry-after'))).toBeGreaterThan(60);
    expect(network.calls.slice(before)).toEqual([guessed, guessed, guessed]);

    // Attempts: a good card charged five times in the hour is refused the sixth time.
    const approvedCard = good;
    const attempts = [];
    for (let i = 0; i < 6; i++) attempts.push(await send(i, approvedCard));
    expect(attempts.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(attempts.slice(0, 5).every((r) => r.body.paymentStatus === 'Success')).toBe(true);
    expect(attempts[5]!.body.error.errorCode).toBe('CARD_TESTING_SUSPECTED');

    const blocked = await events('card_testing_card_blocked');
    expect(blocked).toHaveLength(2);
    const text = JSON.stringify(blocked);
    expect(text).not.toContain(guessed);
    expect(text).not.toContain(approvedCard);
    expect(text).not.toContain(guessed.slice(-4));
    // Another card of the same organisation is not affected.
    expect((await send(0, visa(555_999))).status).toBe(200);
  });

  it('verifications that charge nothing (a schedule starting later) count like charges when recorded', async () => {
    const org = await createOrg(h.db, 'Verifications');
    const src = await createSource(h.db, org.orgGuid, 'Form', 'external', false);
    const caller = (await findSourceCaller(h.db, hashCredential(src.sourceGuid)))!;
    const instrument = (ccNum: string) =>
      prepareInstrument(
        {
          paymentMethodId: 'Credit_Card',
          card: { ccNum, expiry: '12/30', cvv: '123', cardHolderName: null },
          bankAccount: null,
        },
        h.clock.now,
      ).instrument;
    for (let i = 0; i < 10; i++) {
      const fp = await guardCharge(h.db, h.deps, caller, instrument(visa(400_000 + i)));
      await recordVerification(h.db, h.deps, caller, fp!, 'Declined');
    }
    const refused = await guardCharge(h.db, h.deps, caller, instrument(visa(400_999))).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ChargeBlocked);
    expect((refused as ChargeBlocked).code).toBe('TOO_MANY_DECLINES');
    await (refused as ChargeBlocked).persisted;
    // One card verified 5 times (from another credential) is refused the sixth.
    const other = await createSource(h.db, org.orgGuid, 'Form 2', 'external', false);
    const caller2 = (await findSourceCaller(h.db, hashCredential(other.sourceGuid)))!;
    for (let i = 0; i < 5; i++) {
      const fp = await guardCharge(h.db, h.deps, caller2, instrument(good));
      await recordVerification(h.db, h.deps, caller2, fp!, 'Success');
    }
    const card = await guardCharge(h.db, h.deps, caller2, instrument(good)).catch((e: unknown) => e);
    expect((card as ChargeBlocked).code).toBe('CARD_TESTING_SUSPECTED');
    await (card as ChargeBlocked).persisted;
  });

  it('SchedulePayment starting later (a verification, nothing charged) is held to the same limits over HTTP', async () => {
    const org = await createOrg(h.db, 'Later schedules');
    const src = await createSource(h.db, org.orgGuid, 'Recurring form', 'external', false);
    const later = new Date(h.clock.now.getTime() + 10 * 86_400_000).toISOString().slice(0, 10);
    const schedule = (ccNum: string) =>
      h.request(
        'POST',
        '/v1/External/SchedulePayment',
        chargeBody(
          { org },
          {
            uniqueTransactionId: randomUUID(),
            amount: undefined,
            card: { ccNum, expiry: '12/30', cvv: '123' },
            scheduleDetails: {
              frequencyID: 'Monthly',
              startDate: later,
              totalPaymentsCount: 2,
              amountPerPayment: 10,
            },
          },
        ),
        { authorization: src.sourceGuid },
      );
    const before = network.calls.length;
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await schedule(visa(610_000 + i)));
    // Ten declined verifications reach the gateway; then the credential is blocked before it.
    expect(answers.slice(0, 10).map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(answers.slice(0, 10).every((r) => r.body.scheduleStatus !== 'Active')).toBe(true);
    expect(answers.slice(10).map((r) => r.status)).toEqual([429, 429]);
    expect(answers[10]!.body.error.errorCode).toBe('TOO_MANY_DECLINES');
    expect(network.calls.length - before).toBe(10);
  });

  it('old card attempts and ended blocks are purged', async () => {
    const [{ n: attempts }] = (await h.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM card_attempts',
    )) as [{ n: number }];
    expect(attempts).toBeGreaterThan(0);
    // Nothing is old yet, and the blocks still run.
    expect(await purgeAbuseRecords(h.db, h.clock.now)).toBe(0);
    const later = new Date(h.clock.now.getTime() + 40 * 86_400_000);
    expect(await purgeAbuseRecords(h.db, later)).toBeGreaterThan(attempts);
    const left = await h.db.query('SELECT 1 FROM card_attempts UNION ALL SELECT 1 FROM abuse_blocks');
    expect(left).toEqual([]);
  });

  it('a sandbox credential (which reaches only the sandbox) is exempt unless the organisation opts in', async () => {
    const org = await createOrg(h.db, 'Sandbox org');
    const declines = async (n: number) => {
      const out = [];
      for (let i = 0; i < n; i++) {
        out.push(
          await h.request(
            'POST',
            '/v1/External/Charge',
            chargeBody({ org }, { card: { ccNum: '4000000000000002', expiry: '12/30', cvv: '123' } }),
            { authorization: org.sourceGuid },
          ),
        );
      }
      return out.map((r) => r.status);
    };
    expect(await declines(4)).toEqual([200, 200, 200, 200]);
    await h.db.query(
      `UPDATE orgs SET settings = settings || '{"abuse": {"sandbox": true, "cardDeclines": 100, "declines": 5}}'::jsonb
        WHERE guid = $1`,
      [org.orgGuid],
    );
    expect(await declines(3)).toEqual([200, 429, 429]);
  });
});

describe.each(await testDatabases())('rate limits shared in the database on %s', (kind) => {
  let h: Harness;
  let second: ReturnType<typeof createApp>;
  let secondDb: Db;
  beforeAll(async () => {
    h = await createHarness(kind);
    // A second instance: its own app and (PostgreSQL) its own pool, on the same database.
    secondDb =
      kind === 'postgres' ? await openDatabase({ url: PG_URL, schema: h.schema, poolSize: 4 }) : h.db;
    second = createApp({ ...h.deps, db: secondDb, metrics: createMetrics() }, {});
  });
  afterAll(async () => {
    if (kind === 'postgres') await secondDb?.close();
    await h?.close();
  });

  it('two instances share one bucket: the burst is allowed once, not once per instance', async () => {
    const org = await createOrg(h.db, 'Limited twice');
    await h.db.query(
      `UPDATE orgs SET settings = settings || '{"rateLimit": {"perSecond": 0.001, "burst": 4}}'::jsonb WHERE guid = $1`,
      [org.orgGuid],
    );
    const body = JSON.stringify({ orgGuid: org.orgGuid, campaignNumber: 0, campaignName: 'X' });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const app = i % 2 === 0 ? h.app : second;
      const res = await app.request('/V1/External/SaveCampaign', {
        method: 'PUT',
        body,
        headers: { apikey: org.apiKey, 'content-type': 'application/json' },
      });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429, 429, 429]);
  });

  it('rows of buckets that are full again are purged; a bucket still refilling is kept', async () => {
    const buckets = tokenBuckets(h.db);
    expect(await buckets.take('test:fast', { perSecond: 1_000_000, burst: 2 })).toBe(0);
    expect(await buckets.take('test:slow', { perSecond: 0.001, burst: 2 })).toBe(0);
    await purgeFullBuckets(h.db);
    const keys = await h.db.query<{ key: string }>(`SELECT key FROM rate_limits WHERE key LIKE 'test:%'`);
    expect(keys.map((k) => k.key)).toEqual(['test:slow']);
    // The kept bucket still holds what was taken: one token left of two.
    expect(await buckets.take('test:slow', { perSecond: 0.001, burst: 2 })).toBe(0);
    expect(await buckets.take('test:slow', { perSecond: 0.001, burst: 2 })).toBeGreaterThan(100);
  });

  it('a device push takes one token per operation: 100 operations against a burst of 10 are refused whole', async () => {
    const org = await createOrg(h.db, 'Device limits');
    await h.db.query(
      `UPDATE orgs SET settings = settings || '{"rateLimit": {"perSecond": 0.001, "burst": 10}}'::jsonb WHERE guid = $1`,
      [org.orgGuid],
    );
    const device = await pairTestDevice({ admin: h.admin, request: h.request, org }, 'Kiosk');
    const op = (i: number) =>
      sealedOp(device, 'charge', chargeBody({ org }, { amount: 1 + i, uniqueTransactionId: undefined }));
    const hundred = await Promise.all(Array.from({ length: 100 }, (_, i) => op(i)));
    const refused = await device.push(hundred);
    expect(refused.status).toBe(429);
    expect(refused.body.error.errorCode).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const [{ n }] = (await h.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM payments p JOIN orgs o ON o.id = p.org_id WHERE o.guid = $1',
      [org.orgGuid],
    )) as [{ n: number }];
    expect(n).toBe(0);
    // The refused push took no token: 9 operations go (1 token left), then 2 are refused.
    const nine = await device.push(hundred.slice(0, 9));
    expect(nine.status).toBe(200);
    expect(nine.body.results.map((r: { status: string }) => r.status)).toEqual(Array(9).fill('Success'));
    const more = await device.push(hundred.slice(9, 11));
    expect(more.status).toBe(429);
  });
});
