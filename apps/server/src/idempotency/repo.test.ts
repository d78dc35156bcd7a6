import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargeBody, createHarness, type Harness, sourceAuth } from '../testing/harness.ts';
import { purgeKeys } from './repo.ts';

describe('idempotency records', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness('pglite');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('are kept 30 days: the purge removes only older ones, and never younger than 30 days even if asked', async () => {
    const young = chargeBody(h);
    const old = chargeBody(h);
    await h.request('POST', '/v1/External/Charge', young, sourceAuth(h));
    await h.request('POST', '/v1/External/Charge', old, sourceAuth(h));
    await h.db.query(`UPDATE idempotency_keys SET created_at = now() - interval '29 days' WHERE key = $1`, [
      young.uniqueTransactionId,
    ]);
    await h.db.query(`UPDATE idempotency_keys SET created_at = now() - interval '31 days' WHERE key = $1`, [
      old.uniqueTransactionId,
    ]);
    expect(await purgeKeys(h.db, 1)).toBe(1);
    const left = await h.db.query<{ key: string }>('SELECT key FROM idempotency_keys WHERE key IN ($1, $2)', [
      young.uniqueTransactionId,
      old.uniqueTransactionId,
    ]);
    expect(left.map((r) => r.key)).toEqual([young.uniqueTransactionId]);
    const replay = await h.request('POST', '/v1/External/Charge', young, sourceAuth(h));
    expect(replay.status).toBe(200);
  });
});
