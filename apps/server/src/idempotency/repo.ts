import type { Sql } from '../db/database.ts';

export type Claim =
  | { kind: 'new' }
  | { kind: 'replay'; status: number; body: unknown }
  | { kind: 'conflict'; operation: string }
  | { kind: 'in-progress' }
  /** No record under the key, but a payment, schedule or refund used it (before its record was purged). */
  | { kind: 'taken' };

/**
 * What migration 7 left of a request hash made before hashes left out the card number and CVV
 * (those covered them, so they were erased): such a record is taken to be the same body, so a retry
 * replays its stored answer and is never charged again.
 */
export const LEGACY_REQUEST_HASH = 'legacy';

/**
 * Claim `(org, key)` inside the caller's transaction. A concurrent claimer of the same key waits
 * on the unique index until this transaction ends, then sees the stored response, or an unfinished
 * claim (`in-progress`: the first request is calling the gateway, or its outcome is in doubt), or,
 * after a rollback, claims it itself: exactly one charge per key, however many arrive at once.
 */
export async function claimKey(
  tx: Sql,
  orgId: number,
  key: string,
  operation: string,
  requestHash: string,
  opts: { uniqueTransaction?: boolean } = {},
): Promise<Claim> {
  // With `uniqueTransaction`, a key no payment or schedule has used yet (forever, not only while
  // its record lives) is claimed in the same statement that checks it.
  const inserted = await tx.query<{ inserted: boolean; taken: boolean }>(
    `WITH taken AS (
       SELECT $5::boolean AND (
         EXISTS (SELECT 1 FROM payments WHERE org_id = $1 AND unique_transaction_id = $2 AND schedule_id IS NULL)
         OR EXISTS (SELECT 1 FROM schedules WHERE org_id = $1 AND unique_transaction_id = $2)
         OR EXISTS (SELECT 1 FROM refunds WHERE org_id = $1 AND unique_transaction_id = $2)) AS t
     ), ins AS (
       INSERT INTO idempotency_keys (org_id, key, operation, request_hash)
       SELECT $1, $2, $3, $4 WHERE NOT (SELECT t FROM taken)
       ON CONFLICT (org_id, key) DO NOTHING RETURNING key
     )
     SELECT EXISTS (SELECT 1 FROM ins) AS inserted, (SELECT t FROM taken) AS taken`,
    [orgId, key, operation, requestHash, opts.uniqueTransaction === true],
  );
  if (inserted[0]?.inserted) return { kind: 'new' };
  const taken = inserted[0]?.taken === true;
  const [row] = await tx.query<{
    operation: string;
    request_hash: string;
    status_code: number | null;
    response: unknown;
  }>(
    'SELECT operation, request_hash, status_code, response FROM idempotency_keys WHERE org_id = $1 AND key = $2',
    [orgId, key],
  );
  if (!row) {
    if (!taken) return { kind: 'in-progress' };
    // `taken` was judged on the first statement's snapshot. A claim released since (a charge that
    // never reached the gateway: its Pending payment deleted with its key) frees the id again, so
    // look once more: answering "used before" then would lose a donation that was never charged.
    const [now] = await tx.query<{ t: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM payments WHERE org_id = $1 AND unique_transaction_id = $2 AND schedule_id IS NULL)
           OR EXISTS (SELECT 1 FROM schedules WHERE org_id = $1 AND unique_transaction_id = $2)
           OR EXISTS (SELECT 1 FROM refunds WHERE org_id = $1 AND unique_transaction_id = $2) AS t`,
      [orgId, key],
    );
    return now?.t ? { kind: 'taken' } : { kind: 'in-progress' };
  }
  const sameBody = row.request_hash === requestHash || row.request_hash === LEGACY_REQUEST_HASH;
  if (row.operation !== operation || !sameBody) return { kind: 'conflict', operation: row.operation };
  if (row.status_code === null) return { kind: 'in-progress' };
  return { kind: 'replay', status: Number(row.status_code), body: row.response };
}

export async function completeKey(
  tx: Sql,
  orgId: number,
  key: string,
  status: number,
  body: unknown,
): Promise<void> {
  await tx.query(
    'UPDATE idempotency_keys SET status_code = $3, response = $4::json WHERE org_id = $1 AND key = $2',
    [orgId, key, status, JSON.stringify(body)],
  );
}

/** The stored answer of a finished request under `key`, or null. */
export async function findCompletedKey(
  sql: Sql,
  orgId: number,
  key: string,
): Promise<{ operation: string; body: unknown } | null> {
  const [row] = await sql.query<{ operation: string; response: unknown }>(
    `SELECT operation, response FROM idempotency_keys
      WHERE org_id = $1 AND key = $2 AND status_code IS NOT NULL`,
    [orgId, key],
  );
  return row ? { operation: row.operation, body: row.response } : null;
}

/** Release an unfinished key (its request never reached the gateway): the id may be used again. */
export async function forgetKey(tx: Sql, orgId: number, key: string): Promise<void> {
  await tx.query('DELETE FROM idempotency_keys WHERE org_id = $1 AND key = $2 AND status_code IS NULL', [
    orgId,
    key,
  ]);
}

export type KeyState =
  | { kind: 'answered'; body: unknown }
  | { kind: 'pending'; paymentId: number; inDoubt: boolean }
  | { kind: 'running' }
  | { kind: 'gone' };

/** Where a request under this key stands, for another request with the same key that waits for it. */
export async function findKeyAnswer(sql: Sql, orgId: number, key: string): Promise<KeyState> {
  const [row] = await sql.query<{
    status_code: number | null;
    response: unknown;
    payment_id: string | null;
    status: string | null;
    gateway_state: string | null;
  }>(
    `SELECT k.status_code, k.response, k.payment_id, p.status, p.gateway_state
       FROM idempotency_keys k LEFT JOIN payments p ON p.id = k.payment_id
      WHERE k.org_id = $1 AND k.key = $2`,
    [orgId, key],
  );
  if (!row) return { kind: 'gone' };
  if (row.status_code !== null) return { kind: 'answered', body: row.response };
  if (row.payment_id === null || row.status === null) return { kind: 'running' };
  return {
    kind: 'pending',
    paymentId: Number(row.payment_id),
    inDoubt: row.status === 'Pending' && row.gateway_state === 'in_doubt',
  };
}

/** Forget keys older than `days` (at least 30 by decision). */
export async function purgeKeys(sql: Sql, days: number): Promise<number> {
  const rows = await sql.query(
    `DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(days => $1) RETURNING key`,
    [Math.max(30, days)],
  );
  return rows.length;
}
