/**
 * Requests are read exactly: the interface's aliases attach what they name, unknown fields and
 * duplicated keys are refused (nothing written, nothing charged), and a replay is the first answer
 * byte for byte, whatever spelling the retry uses.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pairTestDevice, sealedOp } from '../testing/device-client.ts';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';
import { findDuplicateKey } from './duplicate-keys.ts';

describe('findDuplicateKey', () => {
  it('finds a key given twice at any depth, with its path; escapes decode', () => {
    expect(findDuplicateKey('{"amount":1,"amount":999}')).toBe('amount');
    expect(findDuplicateKey('{"a":1,"card":{"ccNum":"1","cvv":"2","ccNum":"3"}}')).toBe('card.ccNum');
    expect(findDuplicateKey('{"reasons":[{"x":1},{"y":1,"y":2}]}')).toBe('reasons.1.y');
    expect(findDuplicateKey('{"amount":1,"\\u0061mount":2}')).toBe('amount');
    expect(findDuplicateKey('{"a\\"b":1,"a\\"b":2}')).toBe('a"b');
  });
  it('keys of different objects, and strings that look like keys, are not duplicates', () => {
    expect(findDuplicateKey('{"a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":2}]}')).toBeNull();
    expect(findDuplicateKey('{"note":"\\"note\\":1, \\"note\\"","x":["note","note"]}')).toBeNull();
    expect(findDuplicateKey('[1,2,{"a":1}]')).toBeNull();
    expect(findDuplicateKey('{"a":')).toBeNull();
  });
});

describe.each(await testDatabases())('strict requests on %s', (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(kind);
  });
  afterAll(async () => {
    await h?.close();
  });
  const raw = async (method: string, path: string, text: string, headers: Record<string, string>) => {
    const r = await h.app.request(path, {
      method,
      body: text,
      headers: { 'content-type': 'application/json', ...headers },
    });
    return { status: r.status, text: await r.text() };
  };
  const count = async (sql: string, params: unknown[] = []) =>
    Number((await h.db.query<{ n: string }>(`SELECT count(*) AS n FROM ${sql}`, params))[0]!.n);
  const paymentOf = async (receiptNum: string) =>
    (
      await h.db.query<{ campaign: number | null; reason: number | null; donor: string | null }>(
        `SELECT c.number AS campaign, d.account_num AS donor,
                (SELECT min(r.number) FROM payment_reasons pr JOIN reasons r ON r.id = pr.reason_id
                  WHERE pr.payment_id = p.id) AS reason
           FROM payments p LEFT JOIN campaigns c ON c.id = p.campaign_id
           LEFT JOIN donors d ON d.id = p.donor_id
          WHERE p.receipt_num = $1`,
        [receiptNum],
      )
    )[0]!;

  it('Charge attaches campaign, reason and donor named with the spellings of the Save operations', async () => {
    const campaign = await h.request(
      'PUT',
      '/V1/External/SaveCampaign',
      { orgGuid: h.org.orgGuid, campaignNumber: 0, campaignName: 'Matching' },
      keyAuth(h),
    );
    const reason = await h.request(
      'PUT',
      '/V1/External/SaveReason',
      { orgGuid: h.org.orgGuid, reasonNumber: 0, reasonName: 'Kiddush' },
      keyAuth(h),
    );
    const donor = await h.request(
      'PUT',
      '/V1/External/SaveDonor',
      { orgGuid: h.org.orgGuid, donorID: '', firstName: 'Chaya', lastName: 'Stern' },
      keyAuth(h),
    );
    for (const donorRef of [{ donorId: donor.body.donorId }, { donorID: donor.body.donorId }]) {
      const r = await h.request(
        'POST',
        '/v1/External/Charge',
        chargeBody(h, {
          campaign: { campaignNumber: campaign.body.campaignNumber },
          reason: { reasonNumber: reason.body.reasonNumber },
          donor: donorRef,
        }),
        sourceAuth(h),
      );
      expect(r.body).toMatchObject({ paymentStatus: 'Success', accountNum: donor.body.donorId });
      expect(await paymentOf(r.body.receiptNum)).toEqual({
        campaign: campaign.body.campaignNumber,
        reason: reason.body.reasonNumber,
        donor: donor.body.donorId,
      });
    }
    // A split names its reasons the same way.
    const split = await h.request(
      'POST',
      '/v1/External/Charge',
      chargeBody(h, {
        amount: 18,
        reasons: [
          { reasonAmount: 10, reasonNumber: reason.body.reasonNumber },
          { reasonAmount: 8, reasonName: 'Other' },
        ],
      }),
      sourceAuth(h),
    );
    expect(split.body.paymentStatus).toBe('Success');
    // Both spellings with different values: 400 naming the field, nothing charged.
    const before = await count('payments');
    const both = await h.request(
      'POST',
      '/v1/External/Charge',
      chargeBody(h, { campaign: { campaignNum: 1, campaignNumber: 2 } }),
      sourceAuth(h),
    );
    expect(both.status).toBe(400);
    expect(both.body.error.fields).toContainEqual(expect.objectContaining({ field: 'campaign.campaignNum' }));
    expect(await count('payments')).toBe(before);
  });

  it('unknown fields at any level are 400 UNKNOWN_FIELD naming each, and nothing is written or charged', async () => {
    const before = await count('payments');
    const cases: [string, string, Record<string, unknown>, Record<string, string>, string[]][] = [
      ['POST', '/v1/External/Charge', chargeBody(h, { amout: 5 }), sourceAuth(h), ['amout']],
      [
        'POST',
        '/v1/External/Charge',
        chargeBody(h, { card: { ccNumber: '4242424242424242', expiry: '12/30', cvv: '1' }, tip: 1 }),
        sourceAuth(h),
        ['tip', 'card.ccNumber'],
      ],
      [
        'POST',
        '/v1/External/SchedulePayment',
        chargeBody(h, {
          uniqueTransactionId: randomUUID(),
          scheduleDetails: {
            frequencyID: 'Monthly',
            startDate: '2030-01-01',
            totalPaymentsCount: 2,
            every: 3,
          },
        }),
        keyAuth(h),
        ['scheduleDetails.every'],
      ],
      [
        'PUT',
        '/V1/External/SaveDonor',
        {
          orgGuid: h.org.orgGuid,
          donorID: '',
          firstName: 'A',
          lastName: 'B',
          donorPhones: [{ phoneNumber: '1', phoneType: 'cell' }],
        },
        keyAuth(h),
        ['donorPhones.0.phoneType'],
      ],
      [
        'PUT',
        '/V1/External/SaveReason',
        { orgGuid: h.org.orgGuid, reasonNumber: 0, reasonName: 'X', reasonNum: 3 },
        keyAuth(h),
        ['reasonNum'],
      ],
      [
        'PUT',
        '/V1/External/SaveCampaign',
        { orgGuid: h.org.orgGuid, campaignNumber: 0, campaignName: 'X', goal: 1000 },
        keyAuth(h),
        ['goal'],
      ],
      [
        'POST',
        '/v1/External/VoidPayment',
        { orgGUID: h.org.orgGuid, receiptNum: 'R1', why: 'x' },
        keyAuth(h),
        ['why'],
      ],
      ['POST', '/v1/Device/Pair', { pairingCode: 'ABCD1234', name: 'x' }, {}, ['name']],
    ];
    for (const [method, path, body, auth, fields] of cases) {
      const r = await h.request(method, path, body, auth);
      expect(r.status, `${path} ${fields}`).toBe(400);
      expect(r.body.error.errorCode).toBe('UNKNOWN_FIELD');
      const named = r.body.error.fields.slice(0, fields.length).map((f: { field: string }) => f.field);
      expect(named.sort()).toEqual([...fields].sort());
      expect(r.body.error.message).toContain(fields[0]);
    }
    expect(await count('payments')).toBe(before);
    expect(await count(`donors WHERE first_name = 'A' AND last_name = 'B'`)).toBe(0);
    expect(await count(`reasons WHERE name = 'X'`)).toBe(0);
    expect(await count(`campaigns WHERE name = 'X'`)).toBe(0);
  });

  it('a device operation with an unknown field is refused on its own (UNKNOWN_FIELD), the others go through', async () => {
    const device = await pairTestDevice(h, 'Strict kiosk');
    const good = await sealedOp(device, 'charge', chargeBody(h, { uniqueTransactionId: undefined }));
    const bad = await sealedOp(device, 'charge', chargeBody(h, { uniqueTransactionId: undefined, bonus: 1 }));
    const r = await device.push([good, bad]);
    expect(r.status).toBe(200);
    const [a, b] = r.body.results;
    expect(a).toMatchObject({ status: 'Success' });
    expect(b).toMatchObject({ status: 'Error', retryable: false, error: { errorCode: 'UNKNOWN_FIELD' } });
    // The push body itself is strict too.
    const top = await h.request(
      'POST',
      '/v1/Device/Sync/Push',
      { deviceId: device.deviceId, queue: { depth: 0, totalMinor: 0 }, operations: [good], extra: true },
      { authorization: device.credential },
    );
    expect(top.status).toBe(400);
    expect(top.body.error).toMatchObject({ errorCode: 'UNKNOWN_FIELD', fields: [{ field: 'extra' }] });
  });

  it('a JSON object with a key given twice is 400 naming it, on every endpoint; nothing is charged', async () => {
    const before = await count('payments');
    const body = JSON.stringify(chargeBody(h));
    const twice = await raw(
      'POST',
      '/v1/External/Charge',
      body.replace('"amount":18', '"amount":1,"amount":999'),
      sourceAuth(h),
    );
    expect(twice.status).toBe(400);
    expect(JSON.parse(twice.text).error.fields).toEqual([
      { field: 'amount', message: expect.stringMatching(/more than once/) },
    ]);
    const nested = await raw(
      'POST',
      '/v1/External/Charge',
      body.replace('"cvv":"123"', '"cvv":"123","cvv":"999"'),
      sourceAuth(h),
    );
    expect(JSON.parse(nested.text).error.fields[0].field).toBe('card.cvv');
    const saved = await raw(
      'PUT',
      '/V1/External/SaveDonor',
      `{"orgGuid":"${h.org.orgGuid}","donorID":"","firstName":"Dup","firstName":"Dup","lastName":"X"}`,
      keyAuth(h),
    );
    expect(saved.status).toBe(400);
    expect(await count('payments')).toBe(before);
    expect(await count(`donors WHERE first_name = 'Dup'`)).toBe(0);
  });

  it('a replay is byte-identical to the first answer, and spelling variants replay instead of 409', async () => {
    const id = `tx-${randomUUID()}`;
    const base = {
      orgGUID: h.org.orgGuid,
      amount: 36,
      currency: 'CA',
      paymentMethodId: 'Credit Card',
      uniqueTransactionId: id,
      card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
      donor: { firstName: 'Reuven', lastName: 'Katz', phoneNumber: '718-555-0123' },
    };
    const first = await raw('POST', '/v1/External/Charge', JSON.stringify(base), sourceAuth(h));
    expect(first.status).toBe(200);
    // The Charge answer echoes CA, as the charge's own list spells Canadian dollars; stored as CAD.
    expect(JSON.parse(first.text)).toMatchObject({ paymentStatus: 'Success', currency: 'CA', amount: 36 });
    const [stored] = await h.db.query<{ currency: string; method: string }>(
      'SELECT currency, method FROM payments WHERE receipt_num = $1',
      [JSON.parse(first.text).receiptNum],
    );
    expect(stored).toEqual({ currency: 'CAD', method: 'Credit_Card' });
    const { orgGUID, ...rest } = base;
    const variants = [
      JSON.stringify(base),
      JSON.stringify({ ...rest, orgGuid: orgGUID }),
      JSON.stringify({ ...base, currency: 'CAD', paymentMethodId: 'Credit_Card' }),
      JSON.stringify(Object.fromEntries(Object.entries(base).reverse())),
    ];
    for (const v of variants) {
      for (const path of ['/v1/External/Charge', '/V1/External/Charge']) {
        const again = await raw('POST', path, v, sourceAuth(h));
        expect(again.status).toBe(200);
        expect(again.text).toBe(first.text);
      }
    }
    // Another request under the same id is still 409.
    const other = await raw(
      'POST',
      '/v1/External/Charge',
      JSON.stringify({ ...base, amount: 37 }),
      sourceAuth(h),
    );
    expect(other.status).toBe(409);
    expect(await count('payments WHERE unique_transaction_id = $1', [id])).toBe(1);
  });

  it('SchedulePayment replays byte-identically too, with a donor named by donorId', async () => {
    const donor = await h.request(
      'PUT',
      '/V1/External/SaveDonor',
      { orgGuid: h.org.orgGuid, donorID: '', firstName: 'Leah', lastName: 'Adler' },
      keyAuth(h),
    );
    const body = chargeBody(h, {
      uniqueTransactionId: randomUUID(),
      amount: undefined,
      donor: { accountNum: donor.body.donorId },
      scheduleDetails: {
        frequencyID: 'Monthly',
        startDate: '2030-01-01',
        totalPaymentsCount: 3,
        amountPerPayment: 10,
      },
    });
    const first = await raw('POST', '/v1/External/SchedulePayment', JSON.stringify(body), keyAuth(h));
    expect(first.status).toBe(200);
    const again = await raw(
      'POST',
      '/v1/External/SchedulePayment',
      JSON.stringify({ ...body, donor: { donorId: donor.body.donorId } }),
      keyAuth(h),
    );
    expect(again.text).toBe(first.text);
  });
});
