import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  let doc: { servers?: { url: string }[]; paths: Record<string, Record<string, Operation>> };
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
});
