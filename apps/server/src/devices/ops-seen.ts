/**
 * What the server itself knows about the operations a device pushes, independent of what the
 * device claims: when it first saw each (device, opId), and, for operations taken offline, their
 * amounts and the offline-limit verdict (judged once, then kept, so a replay answers the same).
 */
import type { SyncOperation } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';

/**
 * Records the operations of a push as seen now (an operation seen before keeps its first sight),
 * and returns when each was first seen, by opId.
 */
export async function markOpsSeen(
  sql: Sql,
  deviceId: number,
  ops: readonly SyncOperation[],
  now: Date,
): Promise<Map<string, Date>> {
  const rows = ops.map((op) => ({
    op_id: op.opId,
    kind: op.kind,
    created: op.deviceCreatedDate,
    offline: op.offline === true,
  }));
  await sql.query(
    `INSERT INTO device_ops_seen (device_id, op_id, kind, first_seen_at, device_created_at, offline)
     SELECT $1, x.op_id, x.kind, $2::timestamptz, x.created, x.offline
       FROM jsonb_to_recordset($3::jsonb) AS x(op_id text, kind text, created timestamptz, offline boolean)
     ON CONFLICT (device_id, op_id) DO NOTHING`,
    [deviceId, now.toISOString(), JSON.stringify(rows)],
  );
  const seen = await sql.query<{ op_id: string; first_seen_at: Date | string }>(
    `SELECT op_id, first_seen_at FROM device_ops_seen
      WHERE device_id = $1 AND op_id IN (SELECT jsonb_array_elements_text($2::jsonb))`,
    [deviceId, JSON.stringify(ops.map((op) => op.opId))],
  );
  return new Map(seen.map((r) => [r.op_id, new Date(r.first_seen_at)]));
}

/** Sets the amount of an offline operation once its request has been read (first time only). */
export async function recordOfflineAmount(
  sql: Sql,
  deviceId: number,
  opId: string,
  amountMinor: number,
): Promise<void> {
  await sql.query(
    `UPDATE device_ops_seen SET amount_minor = $3
      WHERE device_id = $1 AND op_id = $2 AND amount_minor IS NULL`,
    [deviceId, opId, amountMinor],
  );
}

export type OfflineVerdict = 'ok' | 'over';

export async function offlineVerdictOf(
  sql: Sql,
  deviceId: number,
  opId: string,
): Promise<OfflineVerdict | null> {
  const [row] = await sql.query<{ offline_verdict: OfflineVerdict | null }>(
    'SELECT offline_verdict FROM device_ops_seen WHERE device_id = $1 AND op_id = $2',
    [deviceId, opId],
  );
  return row?.offline_verdict ?? null;
}

/**
 * The device's offline total as it stood when it took `opId` (created at `createdAt` on its
 * clock), without `opId` itself: the amounts of its other offline operations, not refused by the
 * offline limits, taken at or before that time and first seen by the server at or after it —
 * the offline items the device was still holding unsent when it took this one.
 */
export async function heldOfflineMinor(
  sql: Sql,
  deviceId: number,
  opId: string,
  createdAt: string,
): Promise<number> {
  const [row] = await sql.query<{ total: string | number | null }>(
    `SELECT COALESCE(SUM(amount_minor), 0) AS total FROM device_ops_seen
      WHERE device_id = $1 AND offline AND op_id <> $2 AND amount_minor IS NOT NULL
        AND offline_verdict IS DISTINCT FROM 'over'
        AND device_created_at <= $3::timestamptz AND first_seen_at >= $3::timestamptz`,
    [deviceId, opId, createdAt],
  );
  return Number(row?.total ?? 0);
}

/** Keeps the first verdict given for an operation; returns the verdict that stands. */
export async function settleOfflineVerdict(
  sql: Sql,
  deviceId: number,
  opId: string,
  verdict: OfflineVerdict,
): Promise<OfflineVerdict> {
  await sql.query(
    `UPDATE device_ops_seen SET offline_verdict = $3
      WHERE device_id = $1 AND op_id = $2 AND offline_verdict IS NULL`,
    [deviceId, opId, verdict],
  );
  return (await offlineVerdictOf(sql, deviceId, opId)) ?? verdict;
}

/** Since when devices seal under the v2 additional data (set by the migration that introduced it). */
export async function sealV2Since(sql: Sql): Promise<Date | null> {
  const [row] = await sql.query<{ at: Date | string }>(
    "SELECT at FROM device_sync_marks WHERE name = 'seal_aad_v2_since'",
  );
  return row ? new Date(row.at) : null;
}

/**
 * Forget what was first seen more than `days` ago (at least 31: well past any offline expiry, so
 * every operation that old is refused by its device time or was answered long ago; a charged one
 * stays refused by its forever-unique uniqueTransactionId). Returns how many rows went.
 */
export async function purgeOpsSeen(sql: Sql, now: Date, days = 31): Promise<number> {
  const before = new Date(now.getTime() - Math.max(31, days) * 86_400_000).toISOString();
  const rows = await sql.query(
    'DELETE FROM device_ops_seen WHERE first_seen_at < $1::timestamptz RETURNING op_id',
    [before],
  );
  return rows.length;
}
