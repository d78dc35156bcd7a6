import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargeBody, createHarness, type Harness, sourceAuth } from '../testing/harness.ts';

describe('operations endpoints', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('pglite');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('/healthz and /readyz (database reachable)', async () => {
    expect((await h.request('GET', '/healthz')).body).toEqual({ status: 'ok' });
    expect((await h.request('GET', '/readyz')).body).toEqual({ status: 'ready', database: 'pglite' });
  });

  it('/metrics exposes Prometheus counters that move with payments', async () => {
    await h.request('POST', '/v1/External/Charge', chargeBody(h), sourceAuth(h));
    const r = await h.adminRequest('GET', '/metrics');
    expect(r.headers.get('content-type')).toMatch(/text\/plain/);
    expect(r.body).toMatch(/kupah_payments_total\{status="Success",method="Credit_Card"\} 1/);
    expect(r.body).toMatch(
      /kupah_http_requests_total\{method="POST",route="\/v1\/External\/Charge",status="200"\} 1/,
    );
  });

  it('/openapi.json is OpenAPI 3.1 generated from the contracts, with every operation and both auth schemes', async () => {
    const doc = (await h.request('GET', '/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/V1/External/SaveCampaign',
        '/V1/External/SaveCollector',
        '/V1/External/SaveDonor',
        '/V1/External/SaveReason',
        '/v1/Device/Pair',
        '/v1/Device/Receipt/Send',
        '/v1/Device/Shift/Close',
        '/v1/Device/Sync/Pull',
        '/v1/Device/Sync/Push',
        '/v1/External/Charge',
        '/v1/External/Donors',
        '/v1/External/Donors/{accountNum}',
        '/v1/External/Donors/{accountNum}/Statements/{year}',
        '/v1/External/Payments',
        '/v1/External/Payments/{receiptNum}',
        '/v1/External/Payments/{receiptNum}/Receipt',
        '/v1/External/Payments/{receiptNum}/Receipt/Send',
        '/v1/External/Receipts',
        '/v1/External/RefundPayment',
        '/v1/External/Reports/Shifts',
        '/v1/External/Reports/Totals',
        '/v1/External/SchedulePayment',
        '/v1/External/SchedulePreview',
        '/v1/External/Schedules',
        '/v1/External/Schedules/{scheduleNum}/Cancel',
        '/v1/External/Schedules/{scheduleNum}/Pause',
        '/v1/External/Schedules/{scheduleNum}/PaymentMethod',
        '/v1/External/Schedules/{scheduleNum}/Resume',
        '/v1/External/VoidPayment',
      ].sort(),
    );
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['ApiKey', 'SourceGuid']);
    const charge = JSON.stringify(doc.paths['/v1/External/Charge']);
    for (const field of [
      'orgGUID',
      'orgGuid',
      'uniqueTransactionId',
      'paymentMethodId',
      'ccNum',
      'routingNum',
    ]) {
      expect(charge + JSON.stringify(doc.components.schemas ?? {})).toContain(field);
    }
  });

  it('/docs serves the interactive reference', async () => {
    const r = await h.request('GET', '/docs');
    expect(r.status).toBe(200);
    expect(String(r.body)).toContain('/openapi.json');
  });

  it('every response carries a request id; unknown routes are a JSON 404', async () => {
    const r = await h.request('GET', '/nope');
    expect(r.status).toBe(404);
    expect(r.body.error.errorCode).toBe('NOT_FOUND');
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });

  it('v1 and V1 both reach every operation', async () => {
    for (const path of ['/v1/External/Schedules', '/V1/External/Schedules']) {
      const list = await h.request('GET', `${path}?orgGuid=${h.org.orgGuid}`, undefined, {
        apikey: h.org.apiKey,
      });
      expect(list.status, path).toBe(200);
    }
    const a = await h.request('POST', '/V1/External/Charge', chargeBody(h), sourceAuth(h));
    expect(a.status).toBe(200);
    const b = await h.request(
      'PUT',
      '/v1/External/SaveCampaign',
      { orgGuid: h.org.orgGuid, campaignNumber: 0, campaignName: 'x' },
      { apikey: h.org.apiKey },
    );
    expect(b.status).toBe(200);
  });
});
