import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';

describe.each(await testDatabases())('Charge on %s', (kind) => {
  let h: Harness;
  const charge = (over: Record<string, unknown> = {}, path = '/v1/External/Charge') =>
    h.request('POST', path, chargeBody(h, over), sourceAuth(h));
  const count = async (table: string) =>
    Number((await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n);

  beforeAll(async () => {
    h = await createHarness(kind);
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
      rateLimit: { perSecond: 10_000, burst: 10_000 },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('charges a sandbox card and answers 2.2 with exactly its fields', async () => {
    const r = await charge();
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(
      ['accountNum', 'amount', 'currency', 'error', 'paymentStatus', 'receiptNum', 'responseTitle'].sort(),
    );
    expect(r.body).toMatchObject({
      amount: 18,
      currency: 'USD',
      paymentStatus: 'Success',
      accountNum: null,
      error: { errorCode: null, message: null },
    });
    expect(r.body.receiptNum).toMatch(/^R\d+$/);
  });

  it.each([
    ['4242424242424242', 'Success', null],
    ['4111111111111111', 'Success', null],
    ['5555555555554444', 'Success', null],
    ['378282246310005', 'Success', null],
    ['4000000000000002', 'Declined', 'CARD_DECLINED'],
    ['4000000000000119', 'Error', 'GATEWAY_ERROR'],
  ])('sandbox card %s → %s, still HTTP 200', async (ccNum, status, code) => {
    const cvv = ccNum.startsWith('3') ? '1234' : '123';
    const r = await charge({ card: { ccNum, expiry: '12/30', cvv } });
    expect(r.status).toBe(200);
    expect(r.body.paymentStatus).toBe(status);
    expect(r.body.error.errorCode).toBe(code);
    if (code) expect(r.body.error.message).toEqual(expect.any(String));
  });

  it('ACH: any valid routing succeeds, an account ending 0002 is declined, a bad routing number is 400', async () => {
    const ach = (accountNum: string, routingNum = '021000021') =>
      charge({
        paymentMethodId: 'ACH',
        card: null,
        bankAccount: {
          accountNum,
          routingNum,
          accountType: 'Checking',
          checkType: 'Personal',
          nameOnAccount: 'Sarah Levi',
        },
      });
    expect((await ach('12345678')).body.paymentStatus).toBe('Success');
    expect((await ach('12340002')).body.paymentStatus).toBe('Declined');
    const bad = await ach('12345678', '021000022');
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields.map((f: { field: string }) => f.field)).toContain('bankAccount.routingNum');
  });

  it.each(['Provider_1', 'Provider_2', 'Provider_3', 'Provider_4'])(
    'charity card %s: documented numbers',
    async (p) => {
      const n = p.slice(-1);
      const ok = await charge({ paymentMethodId: p, card: { ccNum: `600${n}000000000001` } });
      expect(ok.body.paymentStatus).toBe('Success');
      const declined = await charge({ paymentMethodId: p, card: { ccNum: `600${n}000000000002` } });
      expect(declined.body.paymentStatus).toBe('Declined');
    },
  );

  it('accepts the interface spellings: orgGuid, CA, "Credit Card", V1 path; stores CAD and Credit_Card', async () => {
    const body = chargeBody(h, { currency: 'CA', paymentMethodId: 'Credit Card' });
    body.orgGuid = body.orgGUID;
    delete body.orgGUID;
    const r = await h.request('POST', '/V1/External/Charge', body, sourceAuth(h));
    expect(r.status).toBe(200);
    // The answer echoes the charge request's own spelling of Canadian dollars; CAD is stored.
    expect(r.body.currency).toBe('CA');
    const [row] = await h.db.query<{ currency: string; method: string }>(
      'SELECT currency, method FROM payments WHERE receipt_num = $1',
      [r.body.receiptNum],
    );
    expect(row).toEqual({ currency: 'CAD', method: 'Credit_Card' });
  });

  it('rule 1: each required field missing is a 400 naming it', async () => {
    for (const field of ['orgGUID', 'amount', 'paymentMethodId', 'uniqueTransactionId', 'currency']) {
      const body = chargeBody(h);
      delete body[field];
      const r = await h.request('POST', '/v1/External/Charge', body, sourceAuth(h));
      expect(r.status, field).toBe(400);
      expect(r.body.error.errorCode).toBe('VALIDATION_FAILED');
      expect(r.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
    }
  });

  it('rule 2: paymentDate defaults to now (UTC); a given one is kept', async () => {
    h.clock.set('2026-11-22T10:00:00Z');
    const a = await charge();
    const b = await charge({ paymentDate: '2026-11-20T08:30:00Z' });
    const dates = await h.db.query<{ receipt_num: string; payment_date: Date }>(
      'SELECT receipt_num, payment_date FROM payments WHERE receipt_num IN ($1, $2)',
      [a.body.receiptNum, b.body.receiptNum],
    );
    const byReceipt = Object.fromEntries(
      dates.map((d) => [d.receipt_num, new Date(d.payment_date).toISOString()]),
    );
    expect(byReceipt[a.body.receiptNum]).toBe('2026-11-22T10:00:00.000Z');
    expect(byReceipt[b.body.receiptNum]).toBe('2026-11-20T08:30:00.000Z');
    h.clock.set(new Date().toISOString());
  });

  it('rule 3: the same uniqueTransactionId and body replays the first answer without a second charge', async () => {
    const body = chargeBody(h);
    const before = await count('payments');
    const first = await h.request('POST', '/v1/External/Charge', body, sourceAuth(h));
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await h.request('POST', '/v1/External/Charge', reordered, sourceAuth(h));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(await count('payments')).toBe(before + 1);
  });

  it('rule 3: the same uniqueTransactionId with another body is 409 DUPLICATE_TRANSACTION', async () => {
    const body = chargeBody(h);
    await h.request('POST', '/v1/External/Charge', body, sourceAuth(h));
    const r = await h.request('POST', '/v1/External/Charge', { ...body, amount: 36 }, sourceAuth(h));
    expect(r.status).toBe(409);
    expect(r.body.error.errorCode).toBe('DUPLICATE_TRANSACTION');
  });

  it('fifty concurrent requests with one uniqueTransactionId make exactly one charge', async () => {
    const body = chargeBody(h);
    const before = await count('payments');
    const replies = await Promise.all(
      Array.from({ length: 50 }, () => h.request('POST', '/v1/External/Charge', body, sourceAuth(h))),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(new Set(replies.map((r) => r.body.receiptNum)).size).toBe(1);
    expect(await count('payments')).toBe(before + 1);
  });

  it('a rejected request does not use up its uniqueTransactionId', async () => {
    const body = chargeBody(h, { campaign: { campaignNum: 999_999 } });
    const bad = await h.request('POST', '/v1/External/Charge', body, sourceAuth(h));
    expect(bad.status).toBe(400);
    const good = await h.request('POST', '/v1/External/Charge', { ...body, campaign: null }, sourceAuth(h));
    expect(good.body.paymentStatus).toBe('Success');
  });

  it('rule 4: a currency the organisation is not set up for is refused', async () => {
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { currencies: ['USD', 'ILS'] });
    const r = await charge({ currency: 'EUR' });
    expect(r.status).toBe(400);
    expect(r.body.error.errorCode).toBe('CURRENCY_NOT_ENABLED');
    expect(r.body.error.fields[0].field).toBe('currency');
    expect((await charge({ currency: 'ILS' })).body.paymentStatus).toBe('Success');
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
      currencies: ['USD', 'ILS', 'EUR', 'GBP', 'CAD'],
    });
  });

  it('amounts: at most 2 decimals, > 0, ≤ 1,000,000, stored in minor units', async () => {
    for (const amount of [0, -5, 1_000_000.01, 10.005]) {
      const r = await charge({ amount });
      expect(r.status, String(amount)).toBe(400);
      expect(r.body.error.fields[0].field).toBe('amount');
    }
    const r = await charge({ amount: 1_000_000 });
    expect(r.body.paymentStatus).toBe('Success');
    const cents = await charge({ amount: 0.29 });
    const [row] = await h.db.query<{ amount_minor: string }>(
      'SELECT amount_minor FROM payments WHERE receipt_num = $1',
      [cents.body.receiptNum],
    );
    expect(Number(row!.amount_minor)).toBe(29);
    expect(cents.body.amount).toBe(0.29);
  });

  it('card data: bad Luhn, expiry and CVV are 400s; the full number and CVV are never stored', async () => {
    const luhn = await charge({ card: { ccNum: '4242424242424241', expiry: '12/30', cvv: '123' } });
    expect(luhn.body.error.fields.map((f: { field: string }) => f.field)).toContain('card.ccNum');
    h.clock.set('2026-11-22T12:00:00Z');
    const expired = await charge({ card: { ccNum: '4242424242424242', expiry: '10/26', cvv: '123' } });
    expect(expired.body.error.fields.map((f: { field: string }) => f.field)).toContain('card.expiry');
    h.clock.set(new Date().toISOString());
    const ok = await charge({ card: { ccNum: '4111 1111 1111 1111', expiry: '12/30', cvv: '987' } });
    const rows = await h.db.query<Record<string, unknown>>('SELECT * FROM payments WHERE receipt_num = $1', [
      ok.body.receiptNum,
    ]);
    // Every stored value but instants, ids and the random references (any may hold "987" by chance).
    const random = new Set(['token', 'gateway_ref', 'gateway_key', 'unique_transaction_id']);
    const stored = JSON.stringify(rows, (k, v) =>
      random.has(k) || (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(v)) ? undefined : v,
    );
    expect(stored).not.toContain('4111111111111111');
    expect(stored).not.toContain('987');
    expect(rows[0]).toMatchObject({ brand: 'Visa', last4: '1111', expiry: '12/30' });
    const everything = JSON.stringify(await h.db.query('SELECT * FROM idempotency_keys'));
    expect(everything).not.toContain('4111111111111111');
  });

  it('donor: created from names (accountNum returned), then linked by name + phone, or by accountNum', async () => {
    const donor = { firstName: 'Moshe', lastName: 'Cohen', phoneNumber: '(718) 555-0101' };
    const a = await charge({ donor });
    expect(a.body.accountNum).toMatch(/^D\d+$/);
    const b = await charge({ donor: { ...donor, phoneNumber: '718-555-0101' } });
    expect(b.body.accountNum).toBe(a.body.accountNum);
    const c = await charge({ donor: { accountNum: a.body.accountNum } });
    expect(c.body.accountNum).toBe(a.body.accountNum);
    const namesake = await charge({
      donor: { firstName: 'Moshe', lastName: 'Cohen', phoneNumber: '212-555-0199' },
    });
    expect(namesake.body.accountNum).not.toBe(a.body.accountNum);
  });

  it('donor: Hebrew names create a donor; an unknown accountNum without names is a 400', async () => {
    const r = await charge({ donor: { firstNameHebrew: 'שרה', lastNameHebrew: 'לוי' } });
    expect(r.body.accountNum).toMatch(/^D\d+$/);
    const bad = await charge({ donor: { accountNum: 'D999999999' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields[0].field).toBe('donor.accountNum');
  });

  it('campaign and reasons: a split must sum to the amount; unknown numbers are 400; names resolve', async () => {
    const camp = await h.request(
      'PUT',
      '/V1/External/SaveCampaign',
      { orgGuid: h.org.orgGuid, campaignNumber: 0, campaignName: 'Building Fund' },
      keyAuth(h),
    );
    const split = await charge({
      amount: 100,
      campaign: { campaignNum: camp.body.campaignNumber },
      reasons: [
        { reasonAmount: 60, reasonName: 'Kiddush' },
        { reasonAmount: 40, reasonName: 'Tzedakah' },
      ],
    });
    expect(split.body.paymentStatus).toBe('Success');
    const parts = await h.db.query<{ amount_minor: string }>(
      `SELECT pr.amount_minor FROM payment_reasons pr JOIN payments p ON p.id = pr.payment_id
       WHERE p.receipt_num = $1 ORDER BY pr.amount_minor DESC`,
      [split.body.receiptNum],
    );
    expect(parts.map((p) => Number(p.amount_minor))).toEqual([6000, 4000]);
    const wrong = await charge({
      amount: 100,
      reasons: [
        { reasonAmount: 60, reasonName: 'Kiddush' },
        { reasonAmount: 30, reasonName: 'Tzedakah' },
      ],
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.fields[0].field).toBe('reasons');
    const unknown = await charge({ reason: { reasonNum: 424242 } });
    expect(unknown.body.error.fields[0].field).toBe('reason.reasonNum');
  });

  it('a reason locked to a campaign refuses another campaign', async () => {
    const c1 = await h.request(
      'PUT',
      '/V1/External/SaveCampaign',
      { orgGuid: h.org.orgGuid, campaignNumber: 0, campaignName: 'Purim' },
      keyAuth(h),
    );
    const c2 = await h.request(
      'PUT',
      '/V1/External/SaveCampaign',
      { orgGuid: h.org.orgGuid, campaignNumber: 0, campaignName: 'Pesach' },
      keyAuth(h),
    );
    const reason = await h.request(
      'PUT',
      '/V1/External/SaveReason',
      {
        orgGuid: h.org.orgGuid,
        reasonNumber: 0,
        reasonName: 'Matanot LaEvyonim',
        campaignNum: c1.body.campaignNumber,
      },
      keyAuth(h),
    );
    const r = await charge({
      campaign: { campaignNum: c2.body.campaignNumber },
      reason: { reasonNum: reason.body.reasonNumber },
    });
    expect(r.status).toBe(400);
    const ok = await charge({ reason: { reasonNum: reason.body.reasonNumber } });
    const [row] = await h.db.query<{ number: number }>(
      'SELECT c.number FROM payments p JOIN campaigns c ON c.id = p.campaign_id WHERE p.receipt_num = $1',
      [ok.body.receiptNum],
    );
    expect(row?.number).toBe(c1.body.campaignNumber);
  });

  it('a production source reaches no sandbox gateway: Error GATEWAY_NOT_CONFIGURED', async () => {
    const src = await h.admin('POST', `/orgs/${h.org.orgGuid}/sources`, {
      name: 'Live campaign',
      kind: 'external',
    });
    const r = await h.request('POST', '/v1/External/Charge', chargeBody(h), {
      authorization: src.body.sourceGuid,
    });
    expect(r.status).toBe(200);
    expect(r.body.paymentStatus).toBe('Error');
    expect(r.body.error.errorCode).toBe('GATEWAY_NOT_CONFIGURED');
  });
});
