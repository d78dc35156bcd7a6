import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, keyAuth, testDatabases } from '../testing/harness.ts';

describe.each(await testDatabases())('SaveReason and SaveCampaign on %s', (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(kind);
  });
  afterAll(async () => {
    await h?.close();
  });
  const put = (op: string, body: Record<string, unknown>) =>
    h.request('PUT', `/V1/External/${op}`, { orgGuid: h.org.orgGuid, ...body }, keyAuth(h));

  it('campaignNumber 0 creates with a generated number; an existing number updates; unknown is 404', async () => {
    const a = await put('SaveCampaign', { campaignNumber: 0, campaignName: 'Yom Kippur Appeal' });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({
      orgGuid: h.org.orgGuid,
      campaignNumber: expect.any(Number),
      campaignName: 'Yom Kippur Appeal',
      campaignFriendlyName: null,
    });
    const b = await put('SaveCampaign', { campaignNumber: 0, campaignFriendlyName: 'Chanukah' });
    expect(b.body.campaignNumber).toBe(a.body.campaignNumber + 1);
    const u = await put('SaveCampaign', {
      campaignNumber: a.body.campaignNumber,
      campaignName: 'YK 5787',
      campaignFriendlyName: 'YK',
    });
    expect(u.body).toMatchObject({
      campaignNumber: a.body.campaignNumber,
      campaignName: 'YK 5787',
      campaignFriendlyName: 'YK',
    });
    expect((await put('SaveCampaign', { campaignNumber: 4242, campaignName: 'x' })).status).toBe(404);
    const none = await put('SaveCampaign', { campaignNumber: 0 });
    expect(none.status).toBe(400);
    expect(none.body.error.fields[0].field).toBe('campaignName');
  });

  it('reasonNumber 0 creates; update; either name is enough; neither is 400', async () => {
    const r = await put('SaveReason', {
      reasonNumber: 0,
      reasonNameHebrew: 'הכנסת כלה',
      email: 'kallah@example.org',
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      orgGuid: h.org.orgGuid,
      reasonNumber: expect.any(Number),
      reasonName: null,
      reasonNameHebrew: 'הכנסת כלה',
      homePhoneNumber: null,
      cellPhoneNum: null,
      email: 'kallah@example.org',
      campaignNum: null,
    });
    const u = await put('SaveReason', {
      reasonNumber: r.body.reasonNumber,
      reasonName: 'Hachnasas Kallah',
      cellPhoneNum: '555',
    });
    expect(u.body).toMatchObject({ reasonName: 'Hachnasas Kallah', cellPhoneNum: '555' });
    expect((await put('SaveReason', { reasonNumber: 0 })).status).toBe(400);
    expect((await put('SaveReason', { reasonNumber: 999, reasonName: 'x' })).status).toBe(404);
  });

  it('rule 2: an unknown campaignNum is HTTP 400 with the message "CampaignNum is invalid"', async () => {
    const r = await put('SaveReason', { reasonNumber: 0, reasonName: 'Kiddush', campaignNum: 31337 });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toBe('CampaignNum is invalid');
    const c = await put('SaveCampaign', { campaignNumber: 0, campaignName: 'Shul' });
    const ok = await put('SaveReason', {
      reasonNumber: 0,
      reasonName: 'Kiddush',
      campaignNum: c.body.campaignNumber,
    });
    expect(ok.body.campaignNum).toBe(c.body.campaignNumber);
  });

  it('numbers are per organisation and never collide under concurrency', async () => {
    const replies = await Promise.all(
      Array.from({ length: 15 }, (_, i) => put('SaveReason', { reasonNumber: 0, reasonName: `R${i}` })),
    );
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(new Set(replies.map((r) => r.body.reasonNumber)).size).toBe(15);
  });
});
