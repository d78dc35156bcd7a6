import { donorDetail, paymentDetail, paymentList, totalsResponse } from '@kupah/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg } from '../admin/admin-service.ts';
import { pairTestDevice, sealedOp } from '../testing/device-client.ts';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';
import { type Receiver, startReceiver } from '../testing/receiver.ts';
import { webhookDispatcher } from '../webhooks/dispatcher.ts';
import { csvField } from './report-service.ts';
import { wantsCsv } from './routes.ts';

/**
 * The read API over a small, known set of payments: every filter, the cursor, the totals per group
 * (checked against sums made here from the list), donors, one payment, CSV, and bad input.
 */
describe.each(await testDatabases())('read API on %s', (kind) => {
  let h: Harness;
  let rx: Receiver;
  const receipts: Record<string, string> = {};
  let deviceId = '';
  let collectorId = '';
  let moshe = '';
  let sarah = '';
  const get = (path: string, headers: Record<string, string> = {}) =>
    h.request('GET', path, undefined, { ...keyAuth(h), ...headers });
  const at = (iso: string) => h.clock.set(iso);
  const charge = async (over: Record<string, unknown>) => {
    const r = await h.request('POST', '/v1/External/Charge', chargeBody(h, over), sourceAuth(h));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as { receiptNum: string; paymentStatus: string; accountNum?: string };
  };

  beforeAll(async () => {
    h = await createHarness(kind);
    rx = await startReceiver();
    const settings = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
      timezone: 'America/New_York',
      paymentWebhook: `${rx.url}/payment`,
      voidWebhook: `${rx.url}/void`,
    });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    const key = keyAuth(h);
    const camp = await h.request(
      'PUT',
      '/V1/External/SaveCampaign',
      { orgGuid: h.org.orgGuid, campaignNumber: 0, campaignName: 'Building Fund' },
      key,
    );
    const col = await h.request(
      'PUT',
      '/V1/External/SaveCollector',
      { orgGuid: h.org.orgGuid, collectorID: '', firstName: 'Yossi', lastName: 'Katz' },
      key,
    );
    expect(col.status, JSON.stringify(col.body)).toBe(200);
    collectorId = col.body.collectorId;

    at('2026-11-20T15:00:00.000Z');
    const a = await charge({
      amount: 100,
      donor: {
        firstName: 'Moshe',
        lastName: 'Cohen',
        phoneNumber: '718-555-0101',
        email: 'moshe@example.org',
      },
      campaign: { campaignNumber: camp.body.campaignNumber },
      reasons: [
        { reasonAmount: 60, reasonName: 'Kiddush' },
        { reasonAmount: 40, reasonName: 'Tzedakah' },
      ],
      collectorId,
    });
    receipts.a = a.receiptNum;
    moshe = a.accountNum!;
    // 03:00 UTC on the 21st is still the 20th in New York.
    at('2026-11-21T03:00:00.000Z');
    const b = await charge({
      amount: 36,
      currency: 'ILS',
      donor: { firstNameHebrew: 'שרה', lastNameHebrew: 'לוי' },
    });
    receipts.b = b.receiptNum;
    sarah = b.accountNum!;
    at('2026-11-21T16:00:00.000Z');
    const c = await charge({ amount: 25, card: { ccNum: '4000000000000002', expiry: '12/30', cvv: '123' } });
    expect(c.paymentStatus).toBe('Declined');
    receipts.c = c.receiptNum;
    at('2026-11-22T12:00:00.000Z');
    const d = await charge({ amount: 50, donor: { accountNum: moshe } });
    receipts.d = d.receiptNum;
    const voided = await h.request(
      'POST',
      '/v1/External/VoidPayment',
      { orgGUID: h.org.orgGuid, receiptNum: d.receiptNum, reason: 'duplicate' },
      key,
    );
    expect(voided.status).toBe(200);
    at('2026-11-22T13:00:00.000Z');
    const device = await pairTestDevice(h, 'Lobby Kiosk');
    deviceId = device.deviceId;
    const op = await sealedOp(
      device,
      'charge',
      {
        amount: 18,
        currency: 'USD',
        paymentMethodId: 'Credit_Card',
        card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
        donor: { accountNum: moshe },
        deviceInfo: {
          deviceName: 'Lobby Kiosk',
          timezone: 'America/New_York',
          location: { locationName: 'Main lobby', latitude: 40.7128, longitude: -74.006 },
        },
      },
      { deviceCreatedDate: h.clock.now.toISOString() },
    );
    const pushed = await device.push([op]);
    expect(pushed.body.results[0].status, JSON.stringify(pushed.body)).toBe('Success');
    receipts.e = pushed.body.results[0].receiptNum;
    await webhookDispatcher(h.deps, { allowPrivate: true }).drain();
  });
  afterAll(async () => {
    await rx?.close();
    await h?.close();
  });

  const list = async (query: string) => {
    const r = await get(`/v1/External/Payments?${query}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(paymentList.safeParse(r.body).success).toBe(true);
    return (r.body.payments as { receiptNum: string }[]).map((p) => p.receiptNum);
  };

  it('lists every payment of the organisation, newest first, each with its parties', async () => {
    const r = await get('/v1/External/Payments');
    expect(r.status).toBe(200);
    expect(r.body.payments.map((p: { receiptNum: string }) => p.receiptNum)).toEqual([
      receipts.e,
      receipts.d,
      receipts.c,
      receipts.b,
      receipts.a,
    ]);
    expect(r.body.nextCursor).toBeNull();
    const [e, d, c, b, a] = r.body.payments;
    expect(a).toMatchObject({
      status: 'Success',
      amount: 100,
      amountMinor: 10000,
      currency: 'USD',
      donorId: moshe,
      donorName: 'Moshe Cohen',
      collectorId,
      collectorName: 'Yossi Katz',
      source: 'external',
      last4Digits: '4242',
    });
    expect(a.reasonNumbers).toHaveLength(2);
    expect(b).toMatchObject({ currency: 'ILS', donorName: 'שרה לוי', amountMinor: 3600 });
    expect(c).toMatchObject({ status: 'Declined', errorCode: 'CARD_DECLINED' });
    expect(d).toMatchObject({ status: 'Voided', voidedAt: '2026-11-22T12:00:00.000Z' });
    expect(e).toMatchObject({ source: 'device', deviceId, deviceName: 'Lobby Kiosk', donorId: moshe });
  });

  it('each filter narrows the list; filters combine', async () => {
    expect(await list('status=Declined')).toEqual([receipts.c]);
    expect(await list('currency=ILS')).toEqual([receipts.b]);
    expect(await list(`donorId=${moshe}`)).toEqual([receipts.e, receipts.d, receipts.a]);
    expect(await list(`donorId=${moshe.toLowerCase()}&status=Success`)).toEqual([receipts.e, receipts.a]);
    expect(await list(`collectorId=${collectorId}`)).toEqual([receipts.a]);
    expect(await list('campaignNumber=1')).toEqual([receipts.a]);
    expect(await list(`deviceId=${deviceId}`)).toEqual([receipts.e]);
    expect(await list('source=device')).toEqual([receipts.e]);
    expect(await list('source=apiKey')).toEqual([]);
    expect(await list('method=ACH')).toEqual([]);
    expect(await list('minAmount=36&maxAmount=50')).toEqual([receipts.d, receipts.b]);
    const reason = await get(`/v1/External/Payments/${receipts.a}`);
    expect(await list(`reasonNumber=${reason.body.reasons[1].reasonNumber}`)).toEqual([receipts.a]);
    // Dates are the organisation's (New York): the 20th runs to 05:00 UTC on the 21st.
    expect(await list('from=2026-11-20&to=2026-11-20')).toEqual([receipts.b, receipts.a]);
    expect(await list('from=2026-11-21T00:00:00Z&to=2026-11-22T12:00:00Z')).toEqual([receipts.c, receipts.b]);
    expect(await list('to=2026-11-21T16:00:00Z')).toEqual([receipts.b, receipts.a]);
    // Text: a receipt number exactly, or part of a name in either script.
    expect(await list(`q=${receipts.c}`)).toEqual([receipts.c]);
    expect(await list('q=cohen')).toEqual([receipts.e, receipts.d, receipts.a]);
    expect(await list(`q=${encodeURIComponent('לוי')}`)).toEqual([receipts.b]);
    // Text that looks like SQL or a LIKE pattern is only text.
    expect(await list(`q=${encodeURIComponent("%' OR 1=1 --")}`)).toEqual([]);
    expect(await list(`q=${encodeURIComponent('%')}`)).toEqual([]);
    expect(await list(`q=${encodeURIComponent('_')}`)).toEqual([]);
  });

  it('pages with a cursor: every payment once, in the same order as one page', async () => {
    const all = await list('limit=500');
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await get(`/v1/External/Payments?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.payments.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.payments.map((p: { receiptNum: string }) => p.receiptNum));
      cursor = r.body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(all);
    expect(pages).toBe(3);
  });

  it('one payment: parties, split, device facts, gateway reference, void and webhook deliveries', async () => {
    const a = await get(`/v1/External/Payments/${receipts.a}`);
    expect(a.status).toBe(200);
    expect(paymentDetail.safeParse(a.body).success).toBe(true);
    expect(
      a.body.reasons.map((r: { reasonName: string; amountMinor: number }) => [r.reasonName, r.amountMinor]),
    ).toEqual([
      ['Kiddush', 6000],
      ['Tzedakah', 4000],
    ]);
    expect(a.body.campaign).toEqual({ campaignNumber: 1, campaignName: 'Building Fund' });
    expect(a.body.donor).toMatchObject({ accountNum: moshe, firstName: 'Moshe', lastName: 'Cohen' });
    expect(a.body.donorCreated).toBe(true);
    expect(a.body.gateway.gatewayRefNum).toBeTruthy();
    // Payment webhooks are sent for device payments (webhooksAllSources is off): none for this one.
    expect(a.body.webhooks).toEqual([]);
    const d = await get(`/v1/External/Payments/${receipts.d}`);
    expect(d.body).toMatchObject({ status: 'Voided', voidReason: 'duplicate' });
    expect(d.body.webhooks).toEqual([
      expect.objectContaining({ eventType: 'void', status: 'delivered', attempts: 1, lastStatusCode: 200 }),
    ]);
    const e = await get(`/v1/External/Payments/${receipts.e}`);
    expect(e.body.webhooks).toEqual([
      expect.objectContaining({
        eventType: 'payment',
        url: `${rx.url}/payment`,
        status: 'delivered',
        deliveredAt: '2026-11-22T13:00:00.000Z',
      }),
    ]);
    expect(e.body.device).toMatchObject({
      deviceName: 'Lobby Kiosk',
      timezone: 'America/New_York',
      location: { locationName: 'Main lobby' },
    });
    const missing = await get('/v1/External/Payments/R1');
    expect(missing.status).toBe(404);
    expect(missing.body.error.errorCode).toBe('NOT_FOUND');
  });

  it('totals per group equal the sums of the listed payments; voided and declined apart; never across currencies', async () => {
    const all = (await get('/v1/External/Payments?limit=500')).body.payments as {
      status: string;
      amountMinor: number;
      currency: string;
      createdAt: string;
    }[];
    const r = await get('/v1/External/Reports/Totals?from=2026-11-01&to=2026-11-30&groupBy=currency');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(totalsResponse.safeParse(r.body).success).toBe(true);
    for (const currency of ['USD', 'ILS']) {
      const rows = all.filter((p) => p.currency === currency);
      const sum = (status: string) =>
        rows.filter((p) => p.status === status).reduce((s, p) => s + p.amountMinor, 0);
      const group = r.body.groups.find((g: { key: string }) => g.key === currency);
      expect(group.succeeded.amountMinor).toBe(sum('Success'));
      expect(group.voided.amountMinor).toBe(sum('Voided'));
      expect(group.declined.amountMinor).toBe(sum('Declined'));
      expect(group.succeeded.count).toBe(rows.filter((p) => p.status === 'Success').length);
    }
    expect(r.body.totals.map((t: { currency: string }) => t.currency).sort()).toEqual(['ILS', 'USD']);
    const usd = r.body.totals.find((t: { currency: string }) => t.currency === 'USD');
    expect(usd).toMatchObject({
      key: null,
      succeeded: { count: 2, amountMinor: 11800 },
      voided: { count: 1, amountMinor: 5000 },
      declined: { count: 1, amountMinor: 2500 },
    });

    const byDay = await get('/v1/External/Reports/Totals?from=2026-11-01&to=2026-11-30&groupBy=day');
    expect(byDay.body.timezone).toBe('America/New_York');
    expect(
      byDay.body.groups.map((g: { key: string; currency: string; succeeded: { amountMinor: number } }) => [
        g.key,
        g.currency,
        g.succeeded.amountMinor,
      ]),
    ).toEqual([
      ['2026-11-20', 'ILS', 3600],
      ['2026-11-20', 'USD', 10000],
      ['2026-11-21', 'USD', 0],
      ['2026-11-22', 'USD', 1800],
    ]);
    const byReason = await get('/v1/External/Reports/Totals?from=2026-11-01&to=2026-11-30&groupBy=reason');
    const reasonRows = byReason.body.groups.filter((g: { key: string | null }) => g.key !== null);
    expect(
      reasonRows.map((g: { label: string; succeeded: { amountMinor: number } }) => [
        g.label,
        g.succeeded.amountMinor,
      ]),
    ).toEqual([
      ['Kiddush', 6000],
      ['Tzedakah', 4000],
    ]);
    const byDevice = await get('/v1/External/Reports/Totals?from=2026-11-01&to=2026-11-30&groupBy=device');
    expect(byDevice.body.groups.find((g: { key: string }) => g.key === deviceId)).toMatchObject({
      label: 'Lobby Kiosk',
      succeeded: { count: 1, amountMinor: 1800 },
    });
    const byCollector = await get(
      '/v1/External/Reports/Totals?from=2026-11-01&to=2026-11-30&groupBy=collector',
    );
    expect(byCollector.body.groups[0]).toMatchObject({
      key: collectorId,
      label: 'Yossi Katz',
      succeeded: { count: 1 },
    });
    const byCampaign = await get(
      '/v1/External/Reports/Totals?from=2026-11-01&to=2026-11-30&groupBy=campaign',
    );
    expect(byCampaign.body.groups[0]).toMatchObject({ key: '1', label: 'Building Fund' });
    const byMethod = await get('/v1/External/Reports/Totals?from=2026-11-01&to=2026-11-30&groupBy=method');
    expect(byMethod.body.groups.every((g: { key: string }) => g.key === 'Credit_Card')).toBe(true);
    // A range with nothing in it: no rows, not an error.
    const empty = await get('/v1/External/Reports/Totals?from=2025-01-01&to=2025-02-01&groupBy=day');
    expect(empty.body).toMatchObject({ groups: [], totals: [] });
  });

  it('donors: search by English or Hebrew name, phone digits, e-mail or account number; one donor with yearly totals', async () => {
    const search = async (s: string) =>
      (
        (await get(`/v1/External/Donors?search=${encodeURIComponent(s)}`)).body.donors as {
          donorId: string;
        }[]
      ).map((d) => d.donorId);
    expect(await search('cohen moshe')).toEqual([moshe]);
    expect(await search('Moshe Co')).toEqual([moshe]);
    expect(await search('לוי')).toEqual([sarah]);
    expect(await search('(718) 555-0101')).toEqual([moshe]);
    expect(await search('5550101')).toEqual([moshe]);
    expect(await search('MOSHE@example')).toEqual([moshe]);
    expect(await search(sarah)).toEqual([sarah]);
    expect(await search(sarah.slice(1))).toEqual([sarah]);
    expect(await search('%')).toEqual([]);
    expect((await search('')).sort()).toEqual([moshe, sarah].sort());
    const page1 = await get('/v1/External/Donors?limit=1');
    expect(page1.body.donors).toHaveLength(1);
    const page2 = await get(`/v1/External/Donors?limit=1&cursor=${page1.body.nextCursor}`);
    expect(page2.body.donors).toHaveLength(1);
    expect(page2.body.donors[0].donorId).not.toBe(page1.body.donors[0].donorId);
    expect(page2.body.nextCursor).toBeNull();

    const one = await get(`/v1/External/Donors/${moshe}`);
    expect(one.status).toBe(200);
    expect(donorDetail.safeParse(one.body).success).toBe(true);
    expect(one.body.donor).toMatchObject({ donorId: moshe, firstName: 'Moshe' });
    // The voided payment is not giving; the device payment is.
    expect(one.body.totalsByYear).toEqual([
      { year: 2026, currency: 'USD', count: 2, amount: 118, amountMinor: 11800 },
    ]);
    expect(one.body.payments.map((p: { receiptNum: string }) => p.receiptNum)).toEqual([
      receipts.e,
      receipts.d,
      receipts.a,
    ]);
    expect((await get('/v1/External/Donors/D999999999')).status).toBe(404);
  });

  it('CSV export: every matching payment, UTF-8 with a byte-order mark, Hebrew intact, streamed', async () => {
    const app = await h.listen();
    const res = await fetch(`${app}/v1/External/Payments?limit=1`, {
      headers: { ...keyAuth(h), accept: 'text/csv' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(
      /^attachment; filename="payments-\d{4}-\d{2}-\d{2}\.csv"$/,
    );
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect([...bytes.slice(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes).slice(1);
    const lines = text.split('\r\n').filter(Boolean);
    expect(lines[0]?.startsWith('receiptNum,createdAt,status,amount,currency')).toBe(true);
    // limit does not cut the export: all five payments.
    expect(lines).toHaveLength(6);
    expect(lines.find((l) => l.startsWith(receipts.b!))).toContain('שרה לוי');
    expect(lines.find((l) => l.startsWith(receipts.a!))).toContain(',100.00,USD,');
    const filtered = await get('/v1/External/Payments?status=Declined', { accept: 'text/csv' });
    expect((filtered.body as string).split('\r\n').filter(Boolean)).toHaveLength(2);
    // JSON stays the default for anything else.
    expect(wantsCsv('application/json, text/csv;q=0.5')).toBe(false);
    expect(wantsCsv('text/csv')).toBe(true);
    expect(wantsCsv('text/csv, */*;q=0.1')).toBe(true);
    expect(wantsCsv(undefined)).toBe(false);
  });

  it('a CSV cell a spreadsheet would run as a formula is neutralised; quotes and commas are quoted', () => {
    expect(csvField('=HYPERLINK("http://x")')).toBe(`"'=HYPERLINK(""http://x"")"`);
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('Cohen, Moshe')).toBe('"Cohen, Moshe"');
    expect(csvField(null)).toBe('');
    expect(csvField(-5)).toBe('-5');
  });

  it('scoped to the key: another organisation sees none of these; its GUID in the query is a 403', async () => {
    const other = await createOrg(h.db, 'Other Org');
    const theirs = await h.request('GET', '/v1/External/Payments', undefined, { apikey: other.apiKey });
    expect(theirs.status).toBe(200);
    expect(theirs.body.payments).toEqual([]);
    const lookup = await h.request('GET', `/v1/External/Payments/${receipts.a}`, undefined, {
      apikey: other.apiKey,
    });
    expect(lookup.status).toBe(404);
    const donor = await h.request('GET', `/v1/External/Donors/${moshe}`, undefined, { apikey: other.apiKey });
    expect(donor.status).toBe(404);
    const totals = await h.request(
      'GET',
      '/v1/External/Reports/Totals?from=2026-11-01&to=2026-11-30&groupBy=currency',
      undefined,
      { apikey: other.apiKey },
    );
    expect(totals.body.totals).toEqual([]);
    expect((await get(`/v1/External/Payments?orgGuid=${other.orgGuid}`)).status).toBe(403);
    expect((await get(`/v1/External/Payments?orgGuid=${h.org.orgGuid}`)).status).toBe(200);
    // A source credential (a device or a donation form) cannot read.
    const bySource = await h.request('GET', '/v1/External/Payments', undefined, {
      authorization: h.org.sourceGuid,
    });
    expect([401, 403]).toContain(bySource.status);
  });

  it('bad input is a 400 naming the parameter', async () => {
    const field = async (query: string, path = '/v1/External/Payments') => {
      const r = await get(`${path}?${query}`);
      expect(r.status, `${query}: ${JSON.stringify(r.body)}`).toBe(400);
      return r.body.error.fields.map((f: { field: string }) => f.field);
    };
    expect(await field('cursor=garbage')).toEqual(['cursor']);
    expect(
      await field(`cursor=${Buffer.from('2026-11-20T00:00:00.000000|x').toString('base64url')}`),
    ).toEqual(['cursor']);
    expect(await field('from=2026-11-22&to=2026-11-20')).toEqual(['to']);
    expect(await field('from=2026-11-22T10:00:00Z&to=2026-11-22T10:00:00Z')).toEqual(['to']);
    expect(await field('from=2026-02-30')).toEqual(['from']);
    expect(await field('from=yesterday')).toEqual(['from']);
    expect(await field('to=2026-11-20T25:00:00Z')).toEqual(['to']);
    expect(await field('limit=100000')).toEqual(['limit']);
    expect(await field('limit=0')).toEqual(['limit']);
    expect(await field('minAmount=50&maxAmount=10')).toEqual(['maxAmount']);
    expect(await field('minAmount=-1')).toEqual(['minAmount']);
    expect(await field('status=Approved')).toEqual(['status']);
    expect(await field(`q=${'x'.repeat(101)}`)).toEqual(['q']);
    expect(await field('campaignNumber=abc')).toEqual(['campaignNumber']);
    const unknown = await get('/v1/External/Payments?sort=amount');
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.errorCode).toBe('UNKNOWN_FIELD');
    expect(await field('from=2026-11-01&to=2026-11-30&groupBy=week', '/v1/External/Reports/Totals')).toEqual([
      'groupBy',
    ]);
    expect(await field('groupBy=day', '/v1/External/Reports/Totals')).toEqual(['from', 'to']);
    expect(await field('cursor=bad', '/v1/External/Donors')).toEqual(['cursor']);
    expect(await field(`search=${'x'.repeat(101)}`, '/v1/External/Donors')).toEqual(['search']);
  });

  // Last: it adds payments the tests above do not expect.
  it('a voided split payment moves each reason share to voided; days are the organisation day the payment was taken', async () => {
    at('2026-12-02T15:00:00.000Z');
    const split = await charge({
      amount: 30,
      reasons: [
        { reasonAmount: 20, reasonName: 'Kiddush' },
        { reasonAmount: 10, reasonName: 'Tzedakah' },
      ],
    });
    const range = '/v1/External/Reports/Totals?from=2026-12-01&to=2026-12-31&groupBy=reason';
    const before = (await get(range)).body.groups.filter((g: { key: string | null }) => g.key !== null);
    expect(
      before.map((g: { label: string; succeeded: { amountMinor: number } }) => [
        g.label,
        g.succeeded.amountMinor,
      ]),
    ).toEqual([
      ['Kiddush', 2000],
      ['Tzedakah', 1000],
    ]);
    const voided = await h.request(
      'POST',
      '/v1/External/VoidPayment',
      { orgGUID: h.org.orgGuid, receiptNum: split.receiptNum },
      keyAuth(h),
    );
    expect(voided.status).toBe(200);
    const after = (await get(range)).body;
    expect(
      after.groups.map(
        (g: { label: string; succeeded: { count: number }; voided: { amountMinor: number } }) => [
          g.label,
          g.succeeded.count,
          g.voided.amountMinor,
        ],
      ),
    ).toEqual([
      ['Kiddush', 0, 2000],
      ['Tzedakah', 0, 1000],
    ]);
    expect(after.totals).toEqual([
      expect.objectContaining({ currency: 'USD', voided: { count: 1, amount: 30, amountMinor: 3000 } }),
    ]);

    // The organisation moves to Jerusalem: a payment at 23:00 UTC is taken on the next day there.
    const moved = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { timezone: 'Asia/Jerusalem' });
    expect(moved.status).toBe(200);
    at('2026-12-03T23:00:00.000Z');
    await charge({ amount: 5 });
    const days = (await get('/v1/External/Reports/Totals?from=2026-12-01&to=2026-12-31&groupBy=day')).body;
    expect(days.timezone).toBe('Asia/Jerusalem');
    expect(days.groups.map((g: { key: string }) => g.key)).toEqual(['2026-12-02', '2026-12-04']);
  });
});
