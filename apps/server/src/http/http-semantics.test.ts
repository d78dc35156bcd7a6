import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';
import { isJsonMediaType, withoutTrailingSlash } from './http-semantics.ts';

describe('http semantics helpers', () => {
  it('a trailing slash is dropped from API paths only', () => {
    expect(withoutTrailingSlash('/v1/External/Charge/')).toBe('/v1/External/Charge');
    expect(withoutTrailingSlash('/V1/External/SaveDonor//')).toBe('/V1/External/SaveDonor');
    expect(withoutTrailingSlash('/terminal/')).toBe('/terminal/');
    expect(withoutTrailingSlash('/')).toBe('/');
  });
  it('JSON media types', () => {
    expect(isJsonMediaType('application/json')).toBe(true);
    expect(isJsonMediaType('Application/JSON; charset=utf-8')).toBe(true);
    expect(isJsonMediaType('application/merge-patch+json')).toBe(true);
    expect(isJsonMediaType('text/plain')).toBe(false);
    expect(isJsonMediaType('application/x-www-form-urlencoded')).toBe(false);
    expect(isJsonMediaType(undefined)).toBe(false);
    expect(isJsonMediaType('')).toBe(false);
  });
});

describe.each(await testDatabases())('strict HTTP stacks on %s', (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(kind);
  });
  afterAll(async () => {
    await h?.close();
  });
  const raw = (path: string, init: RequestInit) => h.app.request(path, init);

  it('every 401 carries WWW-Authenticate (External API, device sync, admin API)', async () => {
    const charge = await h.request('POST', '/v1/External/Charge', chargeBody(h));
    expect(charge.status).toBe(401);
    expect(charge.headers.get('www-authenticate')).toMatch(/^APIKey realm="kupah", Bearer realm="kupah"$/);
    const save = await h.request(
      'PUT',
      '/V1/External/SaveDonor',
      { orgGuid: h.org.orgGuid },
      { apikey: 'nope' },
    );
    expect(save.status).toBe(401);
    expect(save.headers.get('www-authenticate')).toContain('APIKey');
    const pull = await h.request('GET', '/v1/Device/Sync/Pull', undefined, { authorization: 'Bearer nope' });
    expect(pull.status).toBe(401);
    expect(pull.headers.get('www-authenticate')).toBe('Bearer realm="kupah-device"');
    const admin = await h.adminRequest('GET', '/admin/orgs');
    expect(admin.status).toBe(401);
    expect(admin.headers.get('www-authenticate')).toBe('Bearer realm="kupah-admin"');
    // Not on other answers.
    const ok = await h.request('POST', '/v1/External/Charge', chargeBody(h), sourceAuth(h));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('www-authenticate')).toBeNull();
  });

  it('a known path with another method is 405 with Allow; an unknown path stays 404', async () => {
    const get = await h.request('GET', '/v1/External/Charge', undefined, sourceAuth(h));
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(get.body.error.errorCode).toBe('METHOD_NOT_ALLOWED');
    const del = await h.request('DELETE', '/v1/External/SaveDonor', undefined, keyAuth(h));
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('PUT');
    const post = await h.request('POST', '/v1/External/Schedules', { orgGuid: h.org.orgGuid }, keyAuth(h));
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const withParam = await h.request('GET', '/v1/External/Schedules/5001/Cancel', undefined, keyAuth(h));
    expect(withParam.status).toBe(405);
    expect(withParam.headers.get('allow')).toBe('POST');
    const options = await raw('/v1/External/Charge', { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('POST, OPTIONS');
    // The device routes' CORS preflight is answered as before.
    const preflight = await raw('/v1/Device/Sync/Push', {
      method: 'OPTIONS',
      headers: { origin: 'file://', 'access-control-request-method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect((await h.request('GET', '/v1/External/Nothing', undefined, keyAuth(h))).status).toBe(404);
    expect((await h.request('POST', '/v1/External/ChargeX', {}, keyAuth(h))).status).toBe(404);
  });

  it('a body that is not application/json is 415, whatever else is wrong; JSON with a charset is fine', async () => {
    const body = JSON.stringify(chargeBody(h, { uniqueTransactionId: randomUUID() }));
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const r = await raw('/v1/External/Charge', {
        method: 'POST',
        body,
        headers: { 'content-type': type, ...sourceAuth(h) },
      });
      expect(r.status, type).toBe(415);
      expect(((await r.json()) as { error: { errorCode: string } }).error.errorCode).toBe(
        'UNSUPPORTED_MEDIA_TYPE',
      );
    }
    // No Content-Type at all (fetch sends text/plain for a string body unless told otherwise).
    const none = await raw('/V1/External/SaveCampaign', {
      method: 'PUT',
      body: new Blob([JSON.stringify({ orgGuid: h.org.orgGuid, campaignNumber: 0, campaignName: 'x' })]),
      headers: keyAuth(h),
    });
    expect(none.status).toBe(415);
    expect(await h.db.query(`SELECT 1 FROM campaigns WHERE name = 'x'`)).toHaveLength(0);
    const ok = await raw('/v1/External/Charge', {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json; charset=utf-8', ...sourceAuth(h) },
    });
    expect(ok.status).toBe(200);
  });

  it('a trailing slash is tolerated on every API path', async () => {
    const charge = await h.request(
      'POST',
      '/v1/External/Charge/',
      chargeBody(h, { uniqueTransactionId: randomUUID() }),
      sourceAuth(h),
    );
    expect(charge.status).toBe(200);
    expect(charge.body.paymentStatus).toBe('Success');
    const save = await h.request(
      'PUT',
      '/v1/External/SaveReason/',
      { orgGuid: h.org.orgGuid, reasonNumber: 0, reasonName: 'Slash' },
      keyAuth(h),
    );
    expect(save.status).toBe(200);
    const list = await h.request(
      'GET',
      `/v1/External/Schedules/?orgGuid=${h.org.orgGuid}`,
      undefined,
      keyAuth(h),
    );
    expect(list.status).toBe(200);
  });
});
