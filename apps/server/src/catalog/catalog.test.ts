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

  it('an update keeps what it does not send: renaming a reason keeps its Hebrew name, contacts and campaign lock', async () => {
    const c = await put('SaveCampaign', { campaignNumber: 0, campaignName: 'Building fund' });
    const r = await put('SaveReason', {
      reasonNumber: 0,
      reasonName: 'Sefer Torah',
      reasonNameHebrew: 'ספר תורה',
      homePhoneNumber: '718-555-0100',
      cellPhoneNum: '917-555-0101',
      email: 'torah@example.org',
      campaignNum: c.body.campaignNumber,
    });
    const renamed = await put('SaveReason', {
      reasonNumber: r.body.reasonNumber,
      reasonName: 'Torah scroll',
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...r.body, reasonName: 'Torah scroll' });
    // null is "not sent" too.
    const nulls = await put('SaveReason', {
      reasonNumber: r.body.reasonNumber,
      reasonNameHebrew: 'ספר תורה חדש',
      reasonName: null,
      email: null,
      campaignNum: null,
    });
    expect(nulls.body).toEqual({ ...r.body, reasonName: 'Torah scroll', reasonNameHebrew: 'ספר תורה חדש' });
    // An empty string deletes an optional field; campaignNum 0 removes the lock.
    const cleared = await put('SaveReason', {
      reasonNumber: r.body.reasonNumber,
      reasonName: 'Torah scroll',
      homePhoneNumber: '',
      email: '',
      campaignNum: 0,
    });
    expect(cleared.body).toMatchObject({
      homePhoneNumber: null,
      email: null,
      campaignNum: null,
      cellPhoneNum: '917-555-0101',
    });
    // A name can be replaced by the other one, never leave the reason without a name.
    const swapped = await put('SaveReason', {
      reasonNumber: r.body.reasonNumber,
      reasonName: '',
      reasonNameHebrew: 'תורה',
    });
    expect(swapped.body).toMatchObject({ reasonName: null, reasonNameHebrew: 'תורה' });
    const nameless = await put('SaveReason', {
      reasonNumber: r.body.reasonNumber,
      reasonNameHebrew: '',
      reasonName: '',
    });
    expect(nameless.status).toBe(400);
    expect(
      (await put('SaveReason', { reasonNumber: r.body.reasonNumber, reasonName: 'x' })).body.reasonNameHebrew,
    ).toBe('תורה');
    // An update may send only what changes, without repeating a name.
    const onlyEmail = await put('SaveReason', {
      reasonNumber: r.body.reasonNumber,
      email: 'sofer@example.org',
    });
    expect(onlyEmail.status).toBe(200);
    expect(onlyEmail.body).toMatchObject({
      reasonName: 'x',
      reasonNameHebrew: 'תורה',
      email: 'sofer@example.org',
    });
    // The same of a campaign; and a new record still needs a name.
    const siyum = await put('SaveCampaign', { campaignNumber: 0, campaignName: 'Siyum' });
    const friendly = await put('SaveCampaign', {
      campaignNumber: siyum.body.campaignNumber,
      campaignFriendlyName: 'S',
    });
    expect(friendly.body).toMatchObject({ campaignName: 'Siyum', campaignFriendlyName: 'S' });
    const unnamed = await put('SaveReason', { reasonNumber: 0, email: 'a@example.org' });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.error.fields).toEqual([
      { field: 'reasonName', message: expect.stringMatching(/required/) },
    ]);
  });

  it('an update keeps what it does not send: renaming a campaign keeps its friendly name', async () => {
    const a = await put('SaveCampaign', {
      campaignNumber: 0,
      campaignName: 'Purim 5787',
      campaignFriendlyName: 'Purim',
    });
    const renamed = await put('SaveCampaign', {
      campaignNumber: a.body.campaignNumber,
      campaignName: 'Purim 5788',
    });
    expect(renamed.body).toEqual({ ...a.body, campaignName: 'Purim 5788' });
    const viaNull = await put('SaveCampaign', {
      campaignNumber: a.body.campaignNumber,
      campaignName: null,
      campaignFriendlyName: 'Purim!',
    });
    expect(viaNull.body).toEqual({ ...a.body, campaignName: 'Purim 5788', campaignFriendlyName: 'Purim!' });
    const cleared = await put('SaveCampaign', {
      campaignNumber: a.body.campaignNumber,
      campaignName: 'P',
      campaignFriendlyName: '',
    });
    expect(cleared.body).toMatchObject({ campaignName: 'P', campaignFriendlyName: null });
    const nameless = await put('SaveCampaign', {
      campaignNumber: a.body.campaignNumber,
      campaignName: '',
      campaignFriendlyName: '',
    });
    expect(nameless.status).toBe(400);
  });

  it('numbers are per organisation and never collide under concurrency', async () => {
    const replies = await Promise.all(
      Array.from({ length: 15 }, (_, i) => put('SaveReason', { reasonNumber: 0, reasonName: `R${i}` })),
    );
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(new Set(replies.map((r) => r.body.reasonNumber)).size).toBe(15);
  });
});
