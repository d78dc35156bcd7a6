import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../scripts/openapi.ts';
import { createHarness, type Harness } from '../testing/harness.ts';
import { OPERATION_IDS } from './openapi-document.ts';

interface Operation {
  operationId?: string;
  security?: unknown[];
  requestBody?: unknown;
  responses: Record<string, { headers?: Record<string, unknown>; content?: unknown }>;
}

describe('the OpenAPI document, as generated clients and linters read it', () => {
  let h: Harness;
  let doc: {
    servers?: { url: string }[];
    paths: Record<string, Record<string, Operation>>;
    components: { schemas: Record<string, Record<string, unknown>> };
  };
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ key: `${method} ${path}`, method, op })),
    );
  beforeAll(async () => {
    h = await createHarness('pglite');
    doc = (await h.request('GET', '/openapi.json')).body;
  });
  afterAll(async () => {
    await h?.close();
  });

  it('the document the typed client is generated from (no database, no listener) is the one served', async () => {
    expect(await openApiDocument()).toEqual(doc);
  });

  it('has servers, and a unique operationId and an explicit security entry on every operation', () => {
    expect(doc.servers?.[0]?.url).toBe('/');
    const ops = operations();
    expect(ops.length).toBeGreaterThanOrEqual(16);
    for (const { key, op } of ops) {
      expect(op.operationId, `${key} has no operationId (add it to OPERATION_IDS)`).toMatch(
        /^[a-z][A-Za-z]+$/,
      );
      expect(Array.isArray(op.security), `${key} has no security entry`).toBe(true);
    }
    const ids = ops.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    // No entry of the table names an operation that does not exist.
    const keys = new Set(ops.map((o) => o.key));
    expect(Object.keys(OPERATION_IDS).filter((k) => !keys.has(k))).toEqual([]);
    // Pairing is authorised by its one-time code: explicitly no header credential.
    expect(doc.paths['/v1/Device/Pair']?.post?.security).toEqual([]);
  });

  it('documents every status an operation can answer, with the headers that go with them', () => {
    for (const { key, method, op } of operations()) {
      const r = op.responses;
      expect(r['405']?.headers?.Allow, key).toBeDefined();
      expect(r['431'], key).toBeDefined();
      expect(r['429']?.headers?.['Retry-After'], key).toBeDefined();
      expect(r['401']?.headers?.['WWW-Authenticate'], key).toBeDefined();
      if (method !== 'get') expect(r['415'], key).toBeDefined();
      for (const status of ['400', '413', '500']) expect(r[status], `${key} ${status}`).toBeDefined();
    }
  });

  it('requires one spelling of what the interface spells two ways: the organisation, and SaveDonor/SaveCollector ids', async () => {
    const oneOf = (a: string, b: string) => ({ oneOf: [{ required: [a] }, { required: [b] }] });
    const s = doc.components.schemas;
    for (const name of [
      'ChargeRequest',
      'VoidPaymentRequest',
      'SchedulePaymentRequest',
      'SaveReasonRequest',
      'SaveCampaignRequest',
    ]) {
      expect(s[name], name).toMatchObject(oneOf('orgGUID', 'orgGuid'));
    }
    expect(s.SaveDonorRequest?.allOf).toEqual([oneOf('orgGUID', 'orgGuid'), oneOf('donorID', 'donorId')]);
    expect(s.SaveCollectorRequest?.allOf).toEqual([
      oneOf('orgGUID', 'orgGuid'),
      oneOf('collectorID', 'collectorId'),
    ]);
    // What the document requires is what the server requires: without either spelling, a 400 naming it.
    const noDonorId = await h.request(
      'PUT',
      '/V1/External/SaveDonor',
      { orgGuid: h.org.orgGuid, firstName: 'A', lastName: 'B' },
      { apikey: h.org.apiKey },
    );
    expect(noDonorId.status).toBe(400);
    expect(noDonorId.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['donorID']);
    const noOrg = await h.request(
      'PUT',
      '/V1/External/SaveDonor',
      { donorID: '', firstName: 'A', lastName: 'B' },
      {
        apikey: h.org.apiKey,
      },
    );
    expect(noOrg.status).toBe(400);
    expect(noOrg.body.error.fields.map((f: { field: string }) => f.field)).toEqual(['orgGuid']);
  });
});
