import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg } from '../admin/admin-service.ts';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';

describe.each(await testDatabases())('authentication, tenancy and limits on %s', (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(kind);
  });
  afterAll(async () => {
    await h?.close();
  });
  const campaign = (orgGuid = h.org.orgGuid) => ({
    orgGuid,
    campaignNumber: 0,
    campaignName: 'Annual Dinner',
  });

  it('Charge without a credential is 401 and says which header to send', async () => {
    const r = await h.request('POST', '/v1/External/Charge', chargeBody(h));
    expect(r.status).toBe(401);
    expect(r.body.error).toMatchObject({
      errorCode: 'UNAUTHORIZED',
      message: expect.stringContaining('Authorization'),
    });
  });

  it('Charge takes the source GUID bare or as Bearer, but not an API key', async () => {
    expect((await h.request('POST', '/v1/External/Charge', chargeBody(h), sourceAuth(h))).status).toBe(200);
    const bearer = { authorization: `Bearer ${h.org.sourceGuid.toUpperCase()}` };
    expect((await h.request('POST', '/v1/External/Charge', chargeBody(h), bearer)).status).toBe(200);
    expect((await h.request('POST', '/v1/External/Charge', chargeBody(h), keyAuth(h))).status).toBe(401);
  });

  it('Save operations take APIKey only; an unknown key is 401', async () => {
    expect((await h.request('PUT', '/V1/External/SaveCampaign', campaign(), keyAuth(h))).status).toBe(200);
    expect((await h.request('PUT', '/V1/External/SaveCampaign', campaign(), sourceAuth(h))).status).toBe(401);
    const r = await h.request('PUT', '/V1/External/SaveCampaign', campaign(), { apikey: 'kpk_test_nope' });
    expect(r.status).toBe(401);
    expect(r.body.error.message).toMatch(/unknown or revoked/);
  });

  it('SchedulePayment and VoidPayment take either header', async () => {
    const paid = await h.request('POST', '/v1/External/Charge', chargeBody(h), sourceAuth(h));
    const v1 = await h.request(
      'POST',
      '/v1/External/VoidPayment',
      { orgGUID: h.org.orgGuid, receiptNum: paid.body.receiptNum },
      keyAuth(h),
    );
    expect(v1.status).toBe(200);
    const paid2 = await h.request('POST', '/v1/External/Charge', chargeBody(h), sourceAuth(h));
    const v2 = await h.request(
      'POST',
      '/v1/External/VoidPayment',
      { orgGUID: h.org.orgGuid, receiptNum: paid2.body.receiptNum },
      sourceAuth(h),
    );
    expect(v2.status).toBe(200);
  });

  it('a credential of another organisation is 403, and records of other orgs are invisible (404)', async () => {
    const other = await createOrg(h.db, 'Other Org');
    const r = await h.request('PUT', '/V1/External/SaveCampaign', campaign(other.orgGuid), keyAuth(h));
    expect(r.status).toBe(403);
    expect(r.body.error.errorCode).toBe('FORBIDDEN');
    const c = await h.request(
      'POST',
      '/v1/External/Charge',
      { ...chargeBody(h), orgGUID: other.orgGuid },
      sourceAuth(h),
    );
    expect(c.status).toBe(403);
    const mine = await h.request('POST', '/v1/External/Charge', chargeBody(h), sourceAuth(h));
    const theirs = await h.request(
      'POST',
      '/v1/External/VoidPayment',
      { orgGUID: other.orgGuid, receiptNum: mine.body.receiptNum },
      { apikey: other.apiKey },
    );
    expect(theirs.status).toBe(404);
    const upd = await h.request(
      'PUT',
      '/V1/External/SaveCampaign',
      { ...campaign(other.orgGuid), campaignNumber: 1 },
      { apikey: other.apiKey },
    );
    expect(upd.status).toBe(404);
  });

  it('credentials are stored only as SHA-256 hashes; revoked ones are 401', async () => {
    const rows = JSON.stringify(
      await h.db.query(
        'SELECT * FROM api_keys UNION ALL SELECT id, org_id, guid_hash, masked, name, sandbox, created_at, revoked_at FROM sources',
      ),
    );
    expect(rows).not.toContain(h.org.apiKey);
    expect(rows).not.toContain(h.org.sourceGuid);
    const key = await h.admin('POST', `/orgs/${h.org.orgGuid}/api-keys`, { sandbox: true });
    expect(
      (await h.request('PUT', '/V1/External/SaveCampaign', campaign(), { apikey: key.body.apiKey })).status,
    ).toBe(200);
    expect(
      (await h.admin('POST', `/orgs/${h.org.orgGuid}/api-keys/revoke`, { apiKey: key.body.apiKey })).status,
    ).toBe(200);
    expect(
      (await h.request('PUT', '/V1/External/SaveCampaign', campaign(), { apikey: key.body.apiKey })).status,
    ).toBe(401);
    const src = await h.admin('POST', `/orgs/${h.org.orgGuid}/sources`, {
      name: 'Kiosk',
      kind: 'device',
      sandbox: true,
    });
    expect(
      (await h.request('POST', '/v1/External/Charge', chargeBody(h), { authorization: src.body.sourceGuid }))
        .status,
    ).toBe(200);
    await h.admin('POST', `/orgs/${h.org.orgGuid}/sources/revoke`, { sourceGuid: src.body.sourceGuid });
    expect(
      (await h.request('POST', '/v1/External/Charge', chargeBody(h), { authorization: src.body.sourceGuid }))
        .status,
    ).toBe(401);
  });

  it('rate limit per credential: 429 with Retry-After past the burst, other credentials unaffected', async () => {
    const org = await createOrg(h.db, 'Limited');
    await h.admin('PATCH', `/orgs/${org.orgGuid}/settings`, { rateLimit: { perSecond: 1, burst: 5 } });
    const body = { orgGuid: org.orgGuid, campaignNumber: 0, campaignName: 'X' };
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 8; i++) {
      const r = await h.request('PUT', '/V1/External/SaveCampaign', body, { apikey: org.apiKey });
      statuses.push(r.status);
      if (r.status === 429) {
        retryAfter = r.headers.get('retry-after');
        expect(r.body.error.errorCode).toBe('RATE_LIMITED');
      }
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await h.request('PUT', '/V1/External/SaveCampaign', campaign(), keyAuth(h))).status).toBe(200);
  });

  it('a body over 64 KiB is 413 PAYLOAD_TOO_LARGE; malformed JSON is a 400', async () => {
    const big = JSON.stringify({ ...chargeBody(h), note: 'x'.repeat(70 * 1024) });
    const r = await h.request('POST', '/v1/External/Charge', big, sourceAuth(h));
    expect(r.status).toBe(413);
    expect(r.body.error.errorCode).toBe('PAYLOAD_TOO_LARGE');
    const bad = await h.request('POST', '/v1/External/Charge', '{"orgGUID": ', sourceAuth(h));
    expect(bad.status).toBe(400);
    expect(bad.body.error.errorCode).toBe('VALIDATION_FAILED');
  });

  it('strings over 256 characters and notes over 2,000 are refused, naming the field', async () => {
    const long = await h.request(
      'POST',
      '/v1/External/Charge',
      chargeBody(h, { donor: { firstName: 'a'.repeat(257), lastName: 'b' } }),
      sourceAuth(h),
    );
    expect(long.body.error.fields[0].field).toBe('donor.firstName');
    const note = await h.request(
      'POST',
      '/v1/External/Charge',
      chargeBody(h, { note: 'n'.repeat(2001) }),
      sourceAuth(h),
    );
    expect(note.body.error.fields[0].field).toBe('note');
    const okNote = await h.request(
      'POST',
      '/v1/External/Charge',
      chargeBody(h, { note: 'n'.repeat(2000) }),
      sourceAuth(h),
    );
    expect(okNote.status).toBe(200);
  });

  it('admin API needs the admin token; an unknown or malformed org is a 404', async () => {
    expect((await h.admin('GET', '/orgs/not-a-guid')).status).toBe(404);
    expect((await h.admin('GET', '/orgs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await h.adminRequest('POST', '/admin/orgs', { name: 'x' })).status).toBe(401);
    expect(
      (await h.adminRequest('POST', '/admin/orgs', { name: 'x' }, { authorization: 'Bearer wrong' })).status,
    ).toBe(401);
  });
});
