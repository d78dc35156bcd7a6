/**
 * SQL of the console's Today screen. Each aggregate reads the covering indexes of migration 12
 * (`payments_totals` on (org_id, created_at) including status, currency, amount, method, source,
 * collector, campaign and local_day; `payment_reasons_totals` for reasons) with one pass per
 * query: the groupings are GROUPING SETS of a single scan, not one scan each.
 */
import type { Sql } from '../db/database.ts';

/** A cell: one group of one dimension, in one currency and status, counted and summed. */
export interface DashboardCell {
  dimension: 'campaign' | 'device' | 'collector' | 'method' | 'currency' | 'series' | 'reason';
  gid: string | null;
  currency: string;
  status: string;
  count: number;
  minor: number;
  /** The money refunded of these payments (PartiallyRefunded, Refunded). */
  refundedMinor: number;
}

const RANGE = 'org_id = $1 AND created_at >= $2 AND created_at < $3';

interface RawCell {
  g: number | string;
  gid: string | null;
  currency: string;
  status: string;
  n: string | number;
  minor: string | number;
  rminor: string | number | null;
}

/**
 * Every grouping of payments created in [from, to) in one scan: by campaign, device (source),
 * collector and method, and the series (by the hour of the organisation's day when
 * `hourly`, else by its day), each per currency and status. Pending payments are counted too.
 */
export async function dashboardCells(
  sql: Sql,
  orgId: number,
  from: Date,
  to: Date,
  tz: string,
  hourly: boolean,
): Promise<DashboardCell[]> {
  // Grouped on the raw value (a date, or the hour as a timestamp); only the few groups are formatted.
  const bucket = hourly ? `date_trunc('hour', created_at AT TIME ZONE $4)` : 'local_day';
  const format = hourly ? `to_char(bucket, 'YYYY-MM-DD"T"HH24:00')` : `to_char(bucket, 'YYYY-MM-DD')`;
  const rows = await sql.query<RawCell>(
    `SELECT g, COALESCE(campaign_id::text, source_id::text, collector_id::text, method, ${format}) AS gid,
       currency, status, n, minor, rminor
     FROM (SELECT GROUPING(campaign_id, source_id, collector_id, method, bucket) AS g, campaign_id, source_id,
             collector_id, method, bucket, currency, status, count(*) AS n, sum(amount_minor) AS minor,
             sum(refunded_minor) AS rminor
           FROM (SELECT campaign_id, source_id, collector_id, method, ${bucket} AS bucket, currency, status,
                   amount_minor, refunded_minor FROM payments WHERE ${RANGE}) p
           GROUP BY GROUPING SETS ((campaign_id, currency, status), (source_id, currency, status),
             (collector_id, currency, status), (method, currency, status), (bucket, currency, status))) g`,
    hourly
      ? [orgId, from.toISOString(), to.toISOString(), tz]
      : [orgId, from.toISOString(), to.toISOString()],
  );
  // GROUPING(...) is a bit mask, 1 for each argument left out, the first argument the high bit:
  // 15 = 0b01111 is the campaign set, 23 = 0b10111 the device set, and so on.
  const DIMENSION: Record<number, DashboardCell['dimension']> = {
    15: 'campaign',
    23: 'device',
    27: 'collector',
    29: 'method',
    30: 'series',
  };
  const cells = rows.flatMap((r) => {
    const dimension = DIMENSION[Number(r.g)];
    if (!dimension) return [];
    return [
      {
        dimension,
        gid: r.gid,
        currency: r.currency,
        status: r.status,
        count: Number(r.n),
        minor: Number(r.minor),
        refundedMinor: Number(r.rminor ?? 0),
      },
    ];
  });
  // By currency: the sum of any one grouping (every payment is in one campaign group), not a sixth set.
  const byCurrency = new Map<string, DashboardCell>();
  for (const c of cells) {
    if (c.dimension !== 'campaign') continue;
    const key = `${c.currency}\u0000${c.status}`;
    const t = byCurrency.get(key) ?? {
      dimension: 'currency',
      gid: c.currency,
      currency: c.currency,
      status: c.status,
      count: 0,
      minor: 0,
      refundedMinor: 0,
    };
    t.count += c.count;
    t.minor += c.minor;
    t.refundedMinor += c.refundedMinor;
    byCurrency.set(key, t);
  }
  return [...cells, ...byCurrency.values()];
}

/**
 * By reason: the reasons' shares of split payments, and the payments without a reason. A reason's
 * share of a refund is proportional to its share of the payment (rounded down), as the read API's.
 */
export async function reasonCells(sql: Sql, orgId: number, from: Date, to: Date): Promise<DashboardCell[]> {
  const params = [orgId, from.toISOString(), to.toISOString()];
  const [shares, none] = await Promise.all([
    sql.query<RawCell>(
      `SELECT 0 AS g, reason_id::text AS gid, currency, status, count(*) AS n, sum(amount_minor) AS minor,
         sum(CASE WHEN status IN ('PartiallyRefunded', 'Refunded') THEN
           (SELECT pr.amount_minor * p.refunded_minor / p.amount_minor FROM payments p WHERE p.id = pr.payment_id)
         END) AS rminor
       FROM payment_reasons pr WHERE ${RANGE} GROUP BY reason_id, currency, status`,
      params,
    ),
    sql.query<RawCell>(
      `SELECT 0 AS g, NULL AS gid, currency, status, count(*) AS n, sum(amount_minor) AS minor,
         sum(refunded_minor) AS rminor
       FROM payments WHERE ${RANGE} AND reason_count = 0 GROUP BY currency, status`,
      params,
    ),
  ]);
  return [...shares, ...none].map((r) => ({
    dimension: 'reason' as const,
    gid: r.gid,
    currency: r.currency,
    status: r.status,
    count: Number(r.n),
    minor: Number(r.minor),
    refundedMinor: Number(r.rminor ?? 0),
  }));
}

/** Names of the groups found: campaigns, devices (sources), collectors, reasons by internal id. */
export async function groupLabels(
  sql: Sql,
  orgId: number,
  ids: { campaign: string[]; device: string[]; collector: string[]; reason: string[] },
): Promise<
  Record<'campaign' | 'device' | 'collector' | 'reason', Map<string, { key: string; label: string | null }>>
> {
  const numeric = (xs: string[]) => xs.filter((x) => /^\d+$/.test(x));
  const q = async (text: string, list: string[]) => {
    const m = new Map<string, { key: string; label: string | null }>();
    if (numeric(list).length === 0) return m;
    const rows = await sql.query<{ gid: string; key: string; label: string | null }>(text, [
      orgId,
      numeric(list),
    ]);
    for (const r of rows) m.set(r.gid, { key: r.key, label: r.label });
    return m;
  };
  const [campaign, device, collector, reason] = await Promise.all([
    q(
      `SELECT id::text AS gid, number::text AS key, COALESCE(name, friendly_name) AS label
       FROM campaigns WHERE org_id = $1 AND id = ANY($2::bigint[])`,
      ids.campaign,
    ),
    q(
      `SELECT s.id::text AS gid, COALESCE(d.device_id, s.masked) AS key, COALESCE(d.name, s.name) AS label
       FROM sources s LEFT JOIN devices d ON d.source_id = s.id WHERE s.org_id = $1 AND s.id = ANY($2::bigint[])`,
      ids.device,
    ),
    q(
      `SELECT id::text AS gid, account_num AS key,
         NULLIF(COALESCE(NULLIF(concat_ws(' ', first_name, last_name), ''),
                         concat_ws(' ', first_name_hebrew, last_name_hebrew)), '') AS label
       FROM collectors WHERE org_id = $1 AND id = ANY($2::bigint[])`,
      ids.collector,
    ),
    q(
      `SELECT id::text AS gid, number::text AS key, COALESCE(name, name_hebrew) AS label
       FROM reasons WHERE org_id = $1 AND id = ANY($2::bigint[])`,
      ids.reason,
    ),
  ]);
  return { campaign, device, collector, reason };
}

/** Payments being confirmed with the gateway now (any age): count and sum per currency. */
export async function pendingNow(sql: Sql, orgId: number) {
  const rows = await sql.query<{ currency: string; n: string; minor: string; oldest: Date | string | null }>(
    `SELECT currency, count(*) AS n, sum(amount_minor) AS minor, min(created_at) AS oldest
     FROM payments WHERE org_id = $1 AND status = 'Pending' GROUP BY currency ORDER BY currency`,
    [orgId],
  );
  return rows.map((r) => ({
    currency: r.currency,
    count: Number(r.n),
    amountMinor: Number(r.minor),
    oldestAt: r.oldest === null ? null : new Date(r.oldest).toISOString(),
  }));
}

/** What the organisation's terminals last reported still waiting to be sent (not revoked ones). */
export async function deviceQueues(sql: Sql, orgId: number) {
  const rows = await sql.query<{
    device_id: string;
    name: string;
    queue_depth: number | null;
    queue_total_minor: string | null;
    last_seen_at: Date | string | null;
  }>(
    `SELECT device_id, name, queue_depth, queue_total_minor, last_seen_at FROM devices
     WHERE org_id = $1 AND revoked_at IS NULL AND paired_at IS NOT NULL ORDER BY created_at, id`,
    [orgId],
  );
  return rows.map((r) => ({
    deviceId: r.device_id,
    name: r.name,
    queueDepth: r.queue_depth ?? 0,
    queueTotalMinor: r.queue_total_minor === null ? 0 : Number(r.queue_total_minor),
    lastSeenAt: r.last_seen_at === null ? null : new Date(r.last_seen_at).toISOString(),
  }));
}
