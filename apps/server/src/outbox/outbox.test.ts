import { parseWebhook, paymentWebhook, scheduleWebhook } from '@kupah/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';
import { listEvents } from './repo.ts';

const inDays = (now: Date, days: number) =>
  new Date(now.getTime() + days * 86_400_000).toISOString().slice(0, 10);

describe.each(await testDatabases())('webhook events in the outbox on %s', (kind) => {
  let h: Harness;
  let orgId: number;
  let device: string;
  beforeAll(async () => {
    h = await createHarness(kind);
    orgId = Number(
      (await h.db.query<{ id: string }>('SELECT id FROM orgs WHERE guid = $1', [h.org.orgGuid]))[0]!.id,
    );
    device = (
      await h.admin('POST', `/orgs/${h.org.orgGuid}/sources`, {
        name: 'Lobby Kiosk',
        kind: 'device',
        sandbox: true,
      })
    ).body.sourceGuid;
  });
  afterAll(async () => {
    await h?.close();
  });
  const events = async (type: 'payment' | 'schedule') => listEvents(h.db, orgId, type);

  it('a device payment queues a payment webhook with the device facts, in the table spellings', async () => {
    const collector = await h.request(
      'PUT',
      '/V1/External/SaveCollector',
      { orgGuid: h.org.orgGuid, collectorID: '', firstName: 'Yossi', lastName: 'Katz' },
      keyAuth(h),
    );
    const before = (await events('payment')).length;
    const r = await h.request(
      'POST',
      '/v1/External/Charge',
      chargeBody(h, {
        donor: { firstName: 'Rivka', lastName: 'Stern', phoneNumber: '3055550123' },
        campaign: { campaignName: 'Gala' },
        reason: { reasonName: 'General' },
        collectorId: collector.body.collectorId,
        card: { ccNum: '5555555555554444', expiry: '11/29', cvv: '321', cardHolderName: 'Rivka Stern' },
        deviceInfo: {
          timezone: 'America/New_York',
          deviceCreatedDate: '2026-11-22T09:15:00Z',
          location: { locationName: 'Main lobby', latitude: 40.7128, longitude: -74.006 },
        },
      }),
      { authorization: device },
    );
    expect(r.body.paymentStatus).toBe('Success');
    const list = await events('payment');
    expect(list).toHaveLength(before + 1);
    const body = list.at(-1)!.payload as Record<string, unknown>;
    expect(paymentWebhook.strict().safeParse(body).success).toBe(true);
    expect(body).toMatchObject({
      orgGuid: h.org.orgGuid,
      amount: '18.00',
      paymentNumber: r.body.receiptNum,
      paymentMethod: 'Credit_Card',
      currency: 'USD',
      brand: 'Mastercard',
      last4Digits: '4444',
      gatewayName: 'Sandbox',
      deviceName: 'Lobby Kiosk',
      timezone: 'America/New_York',
      deviceCreatedDate: '2026-11-22T09:15:00.000Z',
      cardHolderName: 'Rivka Stern',
      isAnonymousDonation: false,
      paymentStatus: 'Success',
      donorInfo: {
        donorNumber: r.body.accountNum,
        newDonor: { donorID: r.body.accountNum, firstName: 'Rivka', lastName: 'Stern' },
      },
      campaignInfo: [{ campaignName: 'Gala' }],
      reasonInfo: [{ reasonName: 'General' }],
      collectorInfo: { collectorName: 'Yossi Katz' },
      locationInfo: { locationName: 'Main lobby', latitude: '40.7128', longitude: '-74.006' },
    });
    expect(body.maskedApiKey).toMatch(/\*{4}/);
    expect(String(body.maskedApiKey)).not.toBe(device);
    expect(JSON.stringify(body)).not.toContain('5555555555554444');
  });

  it('an external source sends no payment webhook unless webhooksAllSources is on; declines never', async () => {
    const before = (await events('payment')).length;
    await h.request('POST', '/v1/External/Charge', chargeBody(h), sourceAuth(h));
    expect(await events('payment')).toHaveLength(before);
    await h.request(
      'POST',
      '/v1/External/Charge',
      chargeBody(h, { card: { ccNum: '4000000000000002', expiry: '12/30', cvv: '123' } }),
      { authorization: device },
    );
    expect(await events('payment')).toHaveLength(before);
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { webhooksAllSources: true });
    await h.request('POST', '/v1/External/Charge', chargeBody(h), sourceAuth(h));
    expect(await events('payment')).toHaveLength(before + 1);
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { webhooksAllSources: false });
  });

  it('a device schedule starting today queues the schedule webhook with firstPayment', async () => {
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York' }).format(h.clock.now);
    const r = await h.request(
      'POST',
      '/v1/External/SchedulePayment',
      chargeBody(h, {
        uniqueTransactionId: crypto.randomUUID(),
        amount: 180,
        donor: { firstNameHebrew: 'אברהם', lastNameHebrew: 'גולד' },
        scheduleDetails: {
          frequencyID: 'Monthly_Hebrew',
          startDate: today,
          totalPaymentsCount: 10,
          amountPerPayment: 18,
        },
      }),
      { authorization: device },
    );
    expect(r.body.paymentStatus).toBe('Success');
    const body = (await events('schedule')).at(-1)!.payload as Record<string, unknown>;
    expect(scheduleWebhook.strict().safeParse(body).success).toBe(true);
    expect(body).toMatchObject({
      scheduleUniqueID: String(r.body.scheduleNum),
      totalScheduleAmount: '180.00',
      countOfSchedules: '10',
      frequency: 'Monthly_Hebrew',
      currency: 'USD',
      donorInfo: { newDonor: { DonorID: r.body.accountNum, FirstName: 'אברהם', LastName: 'גולד' } },
      firstPayment: {
        amount: '18.00',
        paymentNumber: r.body.receiptNum,
        deviceName: 'Lobby Kiosk',
        paymentMethod: 'Credit_Card',
      },
    });
    expect(String(body.scheduleStartDate).slice(0, 10)).toBe(today);
  });

  it('a device schedule starting later has no firstPayment and charges nothing', async () => {
    const r = await h.request(
      'POST',
      '/v1/External/SchedulePayment',
      chargeBody(h, {
        uniqueTransactionId: crypto.randomUUID(),
        amount: 52,
        scheduleDetails: { frequencyID: 'Weekly', startDate: inDays(h.clock.now, 10), totalPaymentsCount: 4 },
      }),
      { authorization: device },
    );
    expect(r.body).toMatchObject({ paymentStatus: 'Success', receiptNum: null });
    const body = (await events('schedule')).at(-1)!.payload as Record<string, unknown>;
    expect(body.scheduleUniqueID).toBe(String(r.body.scheduleNum));
    expect(body).not.toHaveProperty('firstPayment');
  });

  it('the tolerant parser reads the samples\' shapes: one-item arrays, orgGUID, maskedAPIKey, "Credit Card"', () => {
    const sample = {
      orgGUID: 'g',
      processedDateTime: '2026-11-22T10:00:00Z',
      amount: '18.00',
      token: 't',
      maskedAPIKey: 'ab****cd',
      gatewayName: 'G',
      last4Digits: '4242',
      brand: 'Visa',
      paymentNumber: 'R1',
      gatewayRefNum: 'x',
      paymentMethod: 'Credit Card',
      currency: 'CA',
      deviceName: 'K',
      deviceCreatedDate: 'd',
      timezone: 'z',
      cardHolderName: 'n',
      isAnonymousDonation: false,
      paymentStatus: 'Success',
      donorInfo: [{ donorNumber: 'D1' }],
      campaignInfo: { campaignNumber: 1, campaignName: 'c' },
      reasonInfo: [{ reasonNumber: 2, reasonName: 'r' }],
      collectorInfo: [],
      locationInfo: [{ locationName: 'L' }],
    };
    const r = parseWebhook('payment', sample);
    expect(r.success).toBe(true);
    if (r.success) {
      expect(r.data).toMatchObject({
        orgGuid: 'g',
        maskedApiKey: 'ab****cd',
        paymentMethod: 'Credit_Card',
        currency: 'CAD',
        campaignInfo: [{ campaignNumber: 1 }],
        collectorInfo: {},
        locationInfo: { locationName: 'L' },
      });
    }
    const sched = parseWebhook('schedule', {
      orgGuid: 'g',
      scheduleUniqueID: '1',
      totalScheduleAmount: '10',
      countOfSchedules: '1',
      frequency: 'Daily',
      scheduleStartDate: 's',
      currency: 'USD',
      donorInfo: { donorNumber: null },
      campaignInfo: [{ campaignNumber: 3, campaignName: 'c' }],
      reasonInfo: [],
      collectorInfo: [],
      locationInfo: [],
      firstPayment: [{ ...sample, maskedAPIKey: 'm' }],
    });
    expect(sched.success).toBe(true);
    if (sched.success) expect(sched.data.firstPayment?.maskedApiKey).toBe('m');
    // The void webhook's status is a payment status: since refunds, PartiallyRefunded and Refunded too.
    const voidHook = (paymentStatus: string) =>
      parseWebhook('void', { orgGuid: 'g', statusDateTime: 's', paymentNumber: 'R', paymentStatus }).success;
    expect(voidHook('Refunded')).toBe(true);
    expect(voidHook('PartiallyRefunded')).toBe(true);
    expect(voidHook('Cancelled')).toBe(false);
  });
});
