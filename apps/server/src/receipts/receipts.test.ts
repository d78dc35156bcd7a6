/**
 * Receipts end to end through the app: settings, the receipt e-mail written with the payment (and
 * the correction with the void), the PDF (its text read back with pdftotext: Hebrew in logical
 * order), copies by API and by device, a device's receiptEmail, device settings, statements.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pairTestDevice, sealedOp, type TestDevice } from '../testing/device-client.ts';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';
import { pdfText } from '../testing/pdf-text.ts';

describe.each(await testDatabases())('receipts on %s', (kind) => {
  let h: Harness;
  let device: TestDevice;
  beforeAll(async () => {
    h = await createHarness(kind);
    h.clock.set('2026-11-23T14:00:00Z');
    device = await pairTestDevice(h, 'Lobby Kiosk');
  });
  afterAll(async () => {
    await h?.close();
  });

  const settings = (receipts: Record<string, unknown>, more: Record<string, unknown> = {}) =>
    h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { receipts, ...more });
  const deliveries = async (query = '') =>
    (await h.request('GET', `/v1/External/Receipts${query}`, undefined, keyAuth(h))).body.deliveries as {
      deliveryId: number;
      kind: string;
      receiptNum: string | null;
      email: string;
      language: string;
      status: string;
    }[];
  const addressOf = async (deliveryId: number) =>
    (
      await h.db.query<{ to_address: string }>('SELECT to_address FROM receipt_deliveries WHERE id = $1', [
        deliveryId,
      ])
    )[0]!.to_address;
  const saveDonor = async (body: Record<string, unknown>) => {
    const r = await h.request(
      'PUT',
      '/V1/External/SaveDonor',
      { orgGuid: h.org.orgGuid, donorID: '', ...body },
      keyAuth(h),
    );
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.donorId as string;
  };
  const charge = async (over: Record<string, unknown>) => {
    const r = await h.request('POST', '/v1/External/Charge', chargeBody(h, over), sourceAuth(h));
    expect(r.body.paymentStatus, JSON.stringify(r.body)).toBe('Success');
    return r.body.receiptNum as string;
  };
  const pdfOf = async (path: string) => {
    const res = await h.app.request(path, { headers: keyAuth(h) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    return Buffer.from(await res.arrayBuffer());
  };

  it('without legal details no receipt is e-mailed; once the legal name and tax id are set, it is', async () => {
    const donorId = await saveDonor({
      firstName: 'Moshe',
      lastName: 'Cohen',
      donorEmails: [{ emailLabel: 'Home', emailAddress: 'moshe@example.org' }],
    });
    const before = await charge({ donor: { accountNum: donorId } });
    expect((await deliveries()).filter((d) => d.receiptNum === before)).toEqual([]);
    const set = await settings({
      legalName: 'Congregation Chesed Inc.',
      address: '12 Main Street\nBrooklyn, NY 11230',
      taxId: '12-3456789',
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const receiptNum = await charge({ donor: { accountNum: donorId } });
    const [d] = (await deliveries()).filter((x) => x.receiptNum === receiptNum);
    expect(d).toMatchObject({
      kind: 'receipt',
      status: 'pending',
      language: 'en',
      email: 'm•••@example.org',
    });
    expect(await addressOf(d!.deliveryId)).toBe('moshe@example.org');

    // Turned off explicitly: none.
    await settings({ enabled: false });
    const off = await charge({ donor: { accountNum: donorId } });
    expect((await deliveries()).filter((x) => x.receiptNum === off)).toEqual([]);
    await settings({ enabled: null });
  });

  it('the English PDF carries the legal details, amount, method (last 4 only), campaign, reason, note and tax statement', async () => {
    const donorId = await saveDonor({ firstName: 'Chaim', lastName: 'Levi' });
    const receiptNum = await charge({
      amount: 1234.5,
      donor: { accountNum: donorId },
      campaign: { campaignName: 'Building Fund' },
      reason: { reasonName: 'Kiddush' },
      note: 'In honour of the bar mitzvah',
    });
    const text = pdfText(await pdfOf(`/v1/External/Payments/${receiptNum}/Receipt`));
    for (const s of [
      'Congregation Chesed Inc.',
      '12 Main Street',
      'Brooklyn, NY 11230',
      'EIN: 12-3456789',
      'Donation receipt',
      receiptNum,
      '$1,234.50',
      'Visa ending 4242',
      'Building Fund',
      'Kiddush',
      'In honour of the bar mitzvah',
      `Chaim Levi (${donorId})`,
      'No goods or services were provided in exchange for this contribution.',
      'November 23, 2026',
      '13 Kislev 5787',
    ]) {
      expect(text.replace(/\s+/g, ' '), s).toContain(s);
    }
    expect(text).not.toContain('4242424242424242');
  });

  it('the Hebrew PDF reads in logical order: names, amounts, the section 46 statement (an Israeli organisation)', async () => {
    await settings(
      { legalName: 'עמותת חסד ואמת', address: 'רחוב הרצל 12, ירושלים', taxId: '580123456' },
      { il: true },
    );
    const donorId = await saveDonor({ firstNameHebrew: 'שרה', lastNameHebrew: 'לוי' });
    const receiptNum = await charge({
      amount: 180,
      currency: 'ILS',
      donor: { accountNum: donorId },
      reasons: [
        { reasonName: 'צדקה', reasonAmount: 100 },
        { reasonName: 'קידוש', reasonAmount: 80 },
      ],
    });
    const text = pdfText(await pdfOf(`/v1/External/Payments/${receiptNum}/Receipt`));
    const flat = text.replace(/\s+/g, ' ');
    for (const s of [
      'עמותת חסד ואמת',
      'רחוב הרצל',
      'ירושלים',
      'קבלה על תרומה',
      'שרה לוי',
      donorId,
      '180.00',
      '100.00',
      '80.00',
      'צדקה',
      'קידוש',
      'תרומה זו מזכה בזיכוי ממס לפי סעיף',
      'לפקודת מס הכנסה',
      'מוסד ציבורי מאושר',
      '580123456',
      'י״ג כסלו תשפ״ז',
    ]) {
      expect(flat, s).toContain(s);
    }
    // Never reversed: not "הרש" for שרה, not "00.081" for 180.00.
    expect(flat).not.toContain('הרש');
    expect(flat).not.toContain('00.081');
    // The split in its order: צדקה (100) before קידוש (80).
    expect(flat.indexOf('צדקה')).toBeLessThan(flat.indexOf('קידוש'));
    expect(flat.indexOf(' 100.00')).toBeLessThan(flat.indexOf(' 80.00'));
    // A donor known only by a Hebrew name gets it in Hebrew; ?language=en asks for English.
    const en = pdfText(await pdfOf(`/v1/External/Payments/${receiptNum}/Receipt?language=en`));
    expect(en).toContain('Donation receipt');
    expect(en).toContain('section 46');
    await settings(
      { legalName: 'Congregation Chesed Inc.', address: '12 Main Street', taxId: '12-3456789' },
      { il: false },
    );
  });

  it('a void queues a corrected receipt to the same address; the PDF then says so', async () => {
    const donorId = await saveDonor({
      firstName: 'Rivka',
      lastName: 'Stern',
      donorEmails: [{ emailAddress: 'rivka@example.org' }],
    });
    const receiptNum = await charge({ donor: { accountNum: donorId } });
    const v = await h.request(
      'POST',
      '/v1/External/VoidPayment',
      { orgGUID: h.org.orgGuid, receiptNum },
      keyAuth(h),
    );
    expect(v.body.paymentStatus).toBe('Voided');
    // Voiding again changes nothing: one correction.
    await h.request('POST', '/v1/External/VoidPayment', { orgGUID: h.org.orgGuid, receiptNum }, keyAuth(h));
    const mine = (await deliveries(`?receiptNum=${receiptNum}`)).map((d) => d.kind).sort();
    expect(mine).toEqual(['correction', 'receipt']);
    const text = pdfText(await pdfOf(`/v1/External/Payments/${receiptNum}/Receipt`));
    expect(text.replace(/\s+/g, ' ')).toContain('CORRECTED RECEIPT: this donation was voided');
    expect(text).not.toContain('No goods or services');
  });

  it('Receipt/Send: to the donor, or to an address given, once while it waits; 400 without any address; 404 for a decline', async () => {
    const donorId = await saveDonor({
      firstName: 'Dov',
      lastName: 'Baer',
      donorEmails: [{ emailAddress: 'dov@example.org' }],
    });
    const receiptNum = await charge({ donor: { accountNum: donorId } });
    const send = (body: Record<string, unknown>, num = receiptNum) =>
      h.request(
        'POST',
        `/v1/External/Payments/${num}/Receipt/Send`,
        { orgGuid: h.org.orgGuid, ...body },
        keyAuth(h),
      );
    const toDonor = await send({});
    expect(toDonor.status, JSON.stringify(toDonor.body)).toBe(200);
    expect(toDonor.body.delivery).toMatchObject({
      kind: 'copy',
      status: 'pending',
      email: 'd•••@example.org',
    });
    const other = await send({ email: 'accountant@example.com', language: 'he' });
    expect(other.body.delivery).toMatchObject({ kind: 'copy', language: 'he' });
    const again = await send({ email: 'ACCOUNTANT@example.com', language: 'he' });
    expect(again.body.delivery.deliveryId).toBe(other.body.delivery.deliveryId);
    const anonymous = await charge({});
    const none = await send({}, anonymous);
    expect(none.status).toBe(400);
    expect(none.body.error.fields[0].field).toBe('email');
    const bad = await send({ email: 'not-an-address' });
    expect(bad.status).toBe(400);
    const declined = await h.request(
      'POST',
      '/v1/External/Charge',
      chargeBody(h, { card: { ccNum: '4000000000000002', expiry: '12/30', cvv: '123' } }),
      sourceAuth(h),
    );
    expect(declined.body.paymentStatus).toBe('Declined');
    expect((await send({ email: 'x@example.com' }, declined.body.receiptNum)).status).toBe(404);
    expect(
      (
        await h.app.request(`/v1/External/Payments/${declined.body.receiptNum}/Receipt`, {
          headers: keyAuth(h),
        })
      ).status,
    ).toBe(404);
    // The failures view lists by status.
    expect(await deliveries('?status=bounced')).toEqual([]);
  });

  it('device: receiptEmail on a pushed charge sends the receipt there (anonymous donation too), once; settings carry the receipt details', async () => {
    const op = await sealedOp(
      device,
      'charge',
      {
        amount: 36,
        currency: 'USD',
        paymentMethodId: 'Credit_Card',
        card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
        isAnonymousDonation: true,
      },
      { deviceCreatedDate: h.clock.now.toISOString() },
    );
    const withEmail = { ...op, receiptEmail: 'donor@example.net', receiptLanguage: 'he' as const };
    const first = await device.push([withEmail]);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const result = first.body.results[0];
    expect(result.status).toBe('Success');
    // A replay of the same push queues nothing twice.
    await device.push([withEmail]);
    const mine = await deliveries(`?receiptNum=${result.receiptNum}`);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ kind: 'receipt', language: 'he' });
    expect(await addressOf(mine[0]!.deliveryId)).toBe('donor@example.net');
    // Not saved on any donor record.
    const donors = await h.db.query(`SELECT id FROM donors WHERE emails::text LIKE '%donor@example.net%'`);
    expect(donors).toEqual([]);
    const text = pdfText(await pdfOf(`/v1/External/Payments/${result.receiptNum}/Receipt?language=en`));
    expect(text).toContain('Anonymous');

    // An invalid address is refused with the push's validation.
    const badOp = {
      ...(await sealedOp(
        device,
        'charge',
        {
          amount: 1,
          currency: 'USD',
          paymentMethodId: 'Credit_Card',
          card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
        },
        { deviceCreatedDate: h.clock.now.toISOString() },
      )),
      receiptEmail: 'nope',
    };
    expect((await device.push([badOp])).status).toBe(400);

    const pulled = await device.pull();
    expect(pulled.body.settings.receipts).toMatchObject({
      enabled: true,
      legalName: 'Congregation Chesed Inc.',
      taxId: '12-3456789',
    });
    expect(pulled.body.settings.receipts.statement.en).toContain('EIN 12-3456789');
    expect(pulled.body.settings.receipts.statement.he).toMatch(/[\u0590-\u05FF]/);
  });

  it('POST /v1/Device/Receipt/Send: only for a payment of this device (another device or the API: 404)', async () => {
    const op = await sealedOp(
      device,
      'charge',
      {
        amount: 18,
        currency: 'USD',
        paymentMethodId: 'Credit_Card',
        card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
      },
      { deviceCreatedDate: h.clock.now.toISOString() },
    );
    const pushed = await device.push([op]);
    const receiptNum = pushed.body.results[0].receiptNum as string;
    const send = (credential: string, num: string) =>
      h.request(
        'POST',
        '/v1/Device/Receipt/Send',
        { receiptNum: num, email: 'walkin@example.org' },
        { authorization: credential },
      );
    const ok = await send(device.credential, receiptNum);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ receiptNum, delivery: { kind: 'copy', status: 'pending' } });
    const other = await pairTestDevice(h, 'Kiosk 2');
    expect((await send(other.credential, receiptNum)).status).toBe(404);
    const viaApi = await charge({});
    expect((await send(device.credential, viaApi)).status).toBe(404);
    expect((await send('not-a-credential', receiptNum)).status).toBe(401);
  });

  it('a schedule’s receipt states its terms and the next instalment’s date', async () => {
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { scheduleMode: 'Internal' });
    const donorId = await saveDonor({
      firstName: 'Leah',
      lastName: 'Adler',
      donorEmails: [{ emailAddress: 'leah@example.org' }],
    });
    const r = await h.request(
      'POST',
      '/v1/External/SchedulePayment',
      chargeBody(h, {
        uniqueTransactionId: crypto.randomUUID(),
        donor: { accountNum: donorId },
        amount: undefined,
        scheduleDetails: {
          frequencyID: 'Monthly',
          startDate: '2026-11-23',
          totalPaymentsCount: 12,
          amountPerPayment: 36,
        },
      }),
      keyAuth(h),
    );
    expect(r.body.paymentStatus, JSON.stringify(r.body)).toBe('Success');
    const receiptNum = r.body.receiptNum as string;
    expect((await deliveries(`?receiptNum=${receiptNum}`)).map((d) => d.kind)).toEqual(['receipt']);
    const text = pdfText(await pdfOf(`/v1/External/Payments/${receiptNum}/Receipt`)).replace(/\s+/g, ' ');
    expect(text).toContain('payment 1 of 12: $36.00 each; total $432.00 (monthly)');
    expect(text).toContain('Next payment December 23, 2026');
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { scheduleMode: 'Integration' });
  });

  it('year-end statement: every gift of the year with totals per currency (PDF by API)', async () => {
    const donorId = await saveDonor({ firstName: 'Yaakov', lastName: 'Gold' });
    await charge({ amount: 18, donor: { accountNum: donorId } });
    await charge({ amount: 36, donor: { accountNum: donorId } });
    await charge({ amount: 100, currency: 'ILS', donor: { accountNum: donorId } });
    const voided = await charge({ amount: 500, donor: { accountNum: donorId } });
    await h.request(
      'POST',
      '/v1/External/VoidPayment',
      { orgGUID: h.org.orgGuid, receiptNum: voided },
      keyAuth(h),
    );
    const text = pdfText(await pdfOf(`/v1/External/Donors/${donorId}/Statements/2026`)).replace(/\s+/g, ' ');
    expect(text).toContain('Year-end statement 2026');
    expect(text).toContain('Yaakov Gold');
    expect(text).toContain('Total USD $54.00');
    expect(text).toContain('Total ILS ₪100.00');
    expect(text).not.toContain('$500.00');
    const empty = pdfText(await pdfOf(`/v1/External/Donors/${donorId}/Statements/2025`));
    expect(empty).toContain('No gifts were received in this year.');
    const unknown = await h.app.request('/v1/External/Donors/D999999/Statements/2026', {
      headers: keyAuth(h),
    });
    expect(unknown.status).toBe(404);
  });
});
