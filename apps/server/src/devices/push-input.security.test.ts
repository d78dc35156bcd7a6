/**
 * Values a device or an integrator sends that the database cannot hold, or that would print
 * differently from what was stored, are refused with a 400 naming the field: never a 500 from
 * the database, never a receipt that lies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pairTestDevice, sealedOp, type TestDevice } from '../testing/device-client.ts';
import { createHarness, type Harness, keyAuth, testDatabases } from '../testing/harness.ts';

const INT32_MAX = 2 ** 31 - 1;
const RLO = '\u202E';
const RLM = '\u200F';

describe.each(await testDatabases())('device and External API input limits on %s', (kind) => {
  let h: Harness;
  let device: TestDevice;
  beforeAll(async () => {
    h = await createHarness(kind);
    device = await pairTestDevice(h, 'Limits kiosk');
  });
  afterAll(async () => {
    await h?.close();
  });

  const charge = () => ({
    amount: 18,
    currency: 'USD',
    paymentMethodId: 'Credit_Card',
    card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
  });
  const queueDepthOf = async () =>
    (await h.admin('GET', `/orgs/${h.org.orgGuid}/devices`)).body.devices.find(
      (d: { deviceId: string }) => d.deviceId === device.deviceId,
    ).queueDepth;

  it('a push reporting a queue deeper than the int column holds is a 400 on queue.depth, nothing stored', async () => {
    const before = await queueDepthOf();
    for (const depth of [INT32_MAX + 1, 2 ** 53 - 1, 1e15]) {
      const op = await sealedOp(device, 'charge', charge());
      const r = await device.push([op], { depth, totalMinor: 0 });
      expect(r.status, String(depth)).toBe(400);
      expect(r.body.error).toMatchObject({
        errorCode: 'VALIDATION_FAILED',
        fields: [{ field: 'queue.depth', message: 'must be at most 2147483647' }],
      });
    }
    expect(await queueDepthOf()).toBe(before);
    // The largest the column holds is still accepted (the bound is the column's, not tighter).
    const op = await sealedOp(device, 'charge', charge());
    const ok = await device.push([op], { depth: INT32_MAX, totalMinor: 1800 });
    expect(ok.status).toBe(200);
    expect(await queueDepthOf()).toBe(INT32_MAX);
  });

  it('a donor or campaign name with a bidi override is a 400 naming the field; a Hebrew mark is fine', async () => {
    const spoofed = await h.request(
      'PUT',
      '/V1/External/SaveDonor',
      { orgGuid: h.org.orgGuid, donorID: '', firstName: `Dvora ${RLO}0001`, lastName: 'Katz' },
      keyAuth(h),
    );
    expect(spoofed.status).toBe(400);
    expect(spoofed.body.error.errorCode).toBe('VALIDATION_FAILED');
    expect(spoofed.body.error.fields[0]).toMatchObject({
      field: 'firstName',
      message: expect.stringContaining('bidirectional'),
    });
    const campaign = await h.request(
      'PUT',
      '/V1/External/SaveCampaign',
      { orgGuid: h.org.orgGuid, campaignNumber: 0, campaignName: `Gala${RLO}` },
      keyAuth(h),
    );
    expect(campaign.status).toBe(400);
    expect(campaign.body.error.fields[0].field).toBe('campaignName');
    const hebrew = await h.request(
      'PUT',
      '/V1/External/SaveDonor',
      { orgGuid: h.org.orgGuid, donorID: '', firstName: `כהן${RLM} (Cohen)`, lastName: 'Katz' },
      keyAuth(h),
    );
    expect(hebrew.status).toBe(200);
  });
});
