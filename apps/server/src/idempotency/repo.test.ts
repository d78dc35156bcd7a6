import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../db/database.ts';
import { chargeBody, createHarness, type Harness, sourceAuth, testDatabases } from '../testing/harness.ts';
import { claimKey, LEGACY_REQUEST_HASH, purgeKeys } from './repo.ts';

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

  it('a record whose hash was erased by migration 7 (it covered the CVV) replays its answer, charging nothing', async () => {
    const body = chargeBody(h);
    const first = await h.request('POST', '/v1/External/Charge', body, sourceAuth(h));
    await h.db.query('UPDATE idempotency_keys SET request_hash = $1 WHERE key = $2', [
      LEGACY_REQUEST_HASH,
      body.uniqueTransactionId,
    ]);
    const again = await h.request('POST', '/v1/External/Charge', body, sourceAuth(h));
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const rows = await h.db.query('SELECT id FROM payments WHERE unique_transaction_id = $1', [
      body.uniqueTransactionId,
    ]);
    expect(rows).toHaveLength(1);
  });
});

// Two connections are needed to interleave: PostgreSQL only (PGlite runs one statement at a time).
describe.each((await testDatabases()).filter((k) => k === 'postgres'))('claiming a key on %s', (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(kind);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a claim released between the two statements of another claim frees the id: in progress, never "used before"', async () => {
    // A payment under the id without its key stands for a claim another process is releasing.
    const body = chargeBody(h);
    await h.request('POST', '/v1/External/Charge', body, sourceAuth(h));
    const key = body.uniqueTransactionId as string;
    const [org] = await h.db.query<{ id: string }>('SELECT id FROM orgs WHERE guid = $1', [h.org.orgGuid]);
    const orgId = Number(org!.id);
    await h.db.query('DELETE FROM idempotency_keys WHERE key = $1', [key]);
    const claim = (release: boolean) =>
      h.db.transaction((tx) => {
        let statements = 0;
        const interleaved: Sql = {
          async query<T>(text: string, params?: readonly unknown[]) {
            const rows = await tx.query<T>(text, params);
            // After the first statement judged the id taken, the release commits elsewhere.
            if (release && ++statements === 1) {
              await h.db.query('DELETE FROM payments WHERE unique_transaction_id = $1', [key]);
            }
            return rows;
          },
        };
        return claimKey(interleaved, orgId, key, 'Charge', 'h', { uniqueTransaction: true });
      });
    // Still used (its payment is there): "used before".
    expect(await claim(false)).toEqual({ kind: 'taken' });
    // Released meanwhile: the id is free again; the caller answers "in progress" and the retry claims it.
    expect(await claim(true)).toEqual({ kind: 'in-progress' });
    expect(await claim(false)).toEqual({ kind: 'new' });
  });
});
