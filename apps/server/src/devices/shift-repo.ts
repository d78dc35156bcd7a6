/** SQL of shift closes: a device's end-of-shift totals, and the server's totals of the same shift. */
import type { ShiftRow, ShiftTotals } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';

/**
 * The server's totals of one device's payments taken in [from, to) by the device's clock (the
 * time it was taken, not when it was forwarded), by status, method and currency.
 */
export async function serverShiftTotals(
  sql: Sql,
  sourceId: number,
  from: string,
  to: string,
): Promise<ShiftTotals> {
  const rows = await sql.query<{
    status: string;
    method: string;
    currency: string;
    n: string;
    minor: string;
  }>(
    // A payment refunded since (after settlement) was received in the shift: counted as succeeded.
    `SELECT CASE WHEN status IN ('PartiallyRefunded', 'Refunded') THEN 'Success' ELSE status END AS status,
       method, currency, count(*) AS n, sum(amount_minor) AS minor
     FROM payments
     WHERE source_id = $1 AND status IN ('Success', 'Voided', 'Declined', 'PartiallyRefunded', 'Refunded')
       AND COALESCE((device->>'deviceCreatedDate')::timestamptz, created_at) >= $2::timestamptz
       AND COALESCE((device->>'deviceCreatedDate')::timestamptz, created_at) < $3::timestamptz
     GROUP BY 1, method, currency ORDER BY method, currency`,
    [sourceId, from, to],
  );
  const pick = (status: string): ShiftRow[] =>
    rows
      .filter((r) => r.status === status)
      .map((r) => ({
        method: r.method,
        currency: r.currency as ShiftRow['currency'],
        count: Number(r.n),
        amountMinor: Number(r.minor),
      }));
  return { succeeded: pick('Success'), voided: pick('Voided'), declined: pick('Declined') };
}

export interface ShiftRecord {
  closeId: string;
  deviceId: string;
  deviceName: string;
  openedAt: Date;
  closedAt: Date;
  closedBy: string | null;
  device: ShiftTotals;
  server: ShiftTotals;
  recordedAt: Date;
}

/** Records a close once (the same closeId again returns the first record). */
export async function recordShift(
  sql: Sql,
  s: {
    orgId: number;
    deviceRowId: number;
    closeId: string;
    openedAt: string;
    closedAt: string;
    closedBy: string | null;
    device: ShiftTotals;
    server: ShiftTotals;
    at: Date;
  },
): Promise<{ recordedAt: Date; server: ShiftTotals }> {
  await sql.query(
    `INSERT INTO device_shifts (org_id, device_id, close_id, opened_at, closed_at, closed_by, device_totals, server_totals, recorded_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9)
     ON CONFLICT (device_id, close_id) DO NOTHING`,
    [
      s.orgId,
      s.deviceRowId,
      s.closeId,
      s.openedAt,
      s.closedAt,
      s.closedBy,
      JSON.stringify(s.device),
      JSON.stringify(s.server),
      s.at.toISOString(),
    ],
  );
  const [row] = await sql.query<{ recorded_at: Date; server_totals: ShiftTotals }>(
    'SELECT recorded_at, server_totals FROM device_shifts WHERE device_id = $1 AND close_id = $2',
    [s.deviceRowId, s.closeId],
  );
  return { recordedAt: new Date(row!.recorded_at), server: row!.server_totals };
}

/** An organisation's shift closes, newest first (optionally of one device, in a range). */
export async function listShifts(
  sql: Sql,
  orgId: number,
  f: { deviceId: string | null; from: Date | null; to: Date | null; limit: number },
): Promise<ShiftRecord[]> {
  const rows = await sql.query<{
    close_id: string;
    device_id: string;
    name: string;
    opened_at: Date;
    closed_at: Date;
    closed_by: string | null;
    device_totals: ShiftTotals;
    server_totals: ShiftTotals;
    recorded_at: Date;
  }>(
    `SELECT s.close_id, d.device_id, d.name, s.opened_at, s.closed_at, s.closed_by, s.device_totals, s.server_totals,
            s.recorded_at
     FROM device_shifts s JOIN devices d ON d.id = s.device_id
     WHERE s.org_id = $1 AND ($2::text IS NULL OR d.device_id = $2)
       AND ($3::timestamptz IS NULL OR s.closed_at >= $3) AND ($4::timestamptz IS NULL OR s.closed_at < $4)
     ORDER BY s.closed_at DESC, s.id DESC LIMIT $5`,
    [orgId, f.deviceId, f.from?.toISOString() ?? null, f.to?.toISOString() ?? null, f.limit],
  );
  return rows.map((r) => ({
    closeId: r.close_id,
    deviceId: r.device_id,
    deviceName: r.name,
    openedAt: new Date(r.opened_at),
    closedAt: new Date(r.closed_at),
    closedBy: r.closed_by,
    device: r.device_totals,
    server: r.server_totals,
    recordedAt: new Date(r.recorded_at),
  }));
}
