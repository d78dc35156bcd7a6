/**
 * SQL of the read API. Every query is scoped to one organisation (its first parameter) and reads
 * through indexes: payments newest first by (org_id, created_at DESC, id DESC), totals from the
 * covering index `payments_totals` (an index-only scan), a donor's payments by `payments_donor`.
 */
import type { Sql } from '../db/database.ts';
import { listRefunds, type PaymentStatus } from '../payments/repo.ts';

/** A payment's refunds, oldest first (failed and pending ones too). */
export const paymentRefunds = listRefunds;

export interface PaymentFilter {
  /** Resolved bounds (a date is already the organisation's midnight): created at or after, before. */
  from: Date | null;
  to: Date | null;
  status: string | null;
  method: string | null;
  currency: string | null;
  source: 'device' | 'external' | 'apiKey' | null;
  deviceId: string | null;
  collectorId: string | null;
  campaignNumber: number | null;
  reasonNumber: number | null;
  donorId: string | null;
  scheduleNum: number | null;
  minMinor: number | null;
  maxMinor: number | null;
  q: string | null;
  /** The console's search, resolved before the query so that indexes find it: one receipt number, */
  receiptNum?: string | null;
  /** or the payments of any of these donors (internal ids, through payments_donor). */
  donorIds?: number[] | null;
}

export interface PageKey {
  createdAt: string;
  id: number;
}

export interface PaymentRow {
  id: number;
  receiptNum: string;
  status: PaymentStatus;
  amountMinor: number;
  currency: string;
  method: string;
  createdAt: Date;
  createdKey: string;
  processedAt: Date;
  paymentDate: Date;
  donor: Party | null;
  collector: Party | null;
  campaignNumber: number | null;
  campaignName: string | null;
  reasonNumbers: number[];
  scheduleNum: number | null;
  instalment: number | null;
  source: 'device' | 'external' | 'apiKey' | null;
  deviceId: string | null;
  deviceName: string | null;
  brand: string | null;
  last4: string | null;
  voidedAt: Date | null;
  voidReason: string | null;
  refundedMinor: number;
  errorCode: string | null;
  errorMessage: string | null;
  uniqueTransactionId: string | null;
  note: string | null;
  isAnonymous: boolean;
  cardHolderName: string | null;
  donorCreated: boolean;
  gatewayName: string;
  gatewayRef: string | null;
  device: {
    deviceName: string | null;
    timezone: string | null;
    deviceCreatedDate: string | null;
    location: { locationName: string | null; longitude: string | null; latitude: string | null } | null;
  } | null;
}

export interface Party {
  accountNum: string;
  firstName: string | null;
  lastName: string | null;
  firstNameHebrew: string | null;
  lastNameHebrew: string | null;
}

/** `%`, `_` and `\` taken literally in an ILIKE pattern (the default escape character is `\`). */
export const likeLiteral = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Bounds of a range as instants: a date is midnight in the organisation's time zone. */
const lowerBound = (p: string, tz: string) => `(CASE WHEN ${p}::text ~ '^\\d{4}-\\d{2}-\\d{2}$'
  THEN (${p}::date)::timestamp AT TIME ZONE ${tz} ELSE ${p}::timestamptz END)`;
const upperBound = (p: string, tz: string) => `(CASE WHEN ${p}::text ~ '^\\d{4}-\\d{2}-\\d{2}$'
  THEN (${p}::date + 1)::timestamp AT TIME ZONE ${tz} ELSE ${p}::timestamptz END)`;

/** The instants a range's bounds stand for (null when absent), to check before querying. */
export async function resolveRange(
  sql: Sql,
  tz: string,
  from: string | null,
  to: string | null,
): Promise<{ from: Date | null; to: Date | null }> {
  const [row] = await sql.query<{ f: Date | null; t: Date | null }>(
    `SELECT ${lowerBound('$1', '$3')} AS f, ${upperBound('$2', '$3')} AS t`,
    [from, to, tz],
  );
  return { from: row?.f ?? null, to: row?.t ?? null };
}

const PARTY = (alias: string) =>
  `CASE WHEN ${alias}.id IS NULL THEN NULL ELSE json_build_object('accountNum', ${alias}.account_num,
     'firstName', ${alias}.first_name, 'lastName', ${alias}.last_name,
     'firstNameHebrew', ${alias}.first_name_hebrew, 'lastNameHebrew', ${alias}.last_name_hebrew) END`;

const SELECT_PAYMENT = `
SELECT p.id, p.receipt_num, p.status, p.amount_minor, p.currency, p.method, p.created_at, p.processed_at,
  p.payment_date, to_char(p.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS created_key,
  ${PARTY('d')} AS donor, ${PARTY('c')} AS collector, cp.number AS campaign_number,
  COALESCE(cp.name, cp.friendly_name) AS campaign_name,
  ARRAY(SELECT r.number FROM payment_reasons pr JOIN reasons r ON r.id = pr.reason_id
        WHERE pr.payment_id = p.id ORDER BY r.number) AS reason_numbers,
  s.schedule_num, p.instalment_seq,
  CASE WHEN src.kind IS NOT NULL THEN src.kind WHEN p.api_key_id IS NOT NULL THEN 'apiKey' END AS source,
  dev.device_id, COALESCE(p.device->>'deviceName', dev.name) AS device_name,
  p.brand, p.last4, p.voided_at, p.void_reason, p.refunded_minor, p.error_code, p.error_message, p.unique_transaction_id,
  p.note, p.is_anonymous, p.card_holder_name, p.donor_created, p.gateway_name, p.gateway_ref, p.device
FROM payments p
LEFT JOIN donors d ON d.id = p.donor_id
LEFT JOIN collectors c ON c.id = p.collector_id
LEFT JOIN campaigns cp ON cp.id = p.campaign_id
LEFT JOIN schedules s ON s.id = p.schedule_id
LEFT JOIN sources src ON src.id = p.source_id
LEFT JOIN devices dev ON dev.source_id = p.source_id AND dev.source_id IS NOT NULL`;

interface RawPayment {
  id: string | number;
  receipt_num: string;
  status: PaymentStatus;
  amount_minor: string | number;
  currency: string;
  method: string;
  created_at: Date;
  processed_at: Date;
  payment_date: Date;
  created_key: string;
  donor: Party | null;
  collector: Party | null;
  campaign_number: number | null;
  campaign_name: string | null;
  reason_numbers: number[];
  schedule_num: string | number | null;
  instalment_seq: number | null;
  source: 'device' | 'external' | 'apiKey' | null;
  device_id: string | null;
  device_name: string | null;
  brand: string | null;
  last4: string | null;
  voided_at: Date | null;
  void_reason: string | null;
  refunded_minor: string | number;
  error_code: string | null;
  error_message: string | null;
  unique_transaction_id: string | null;
  note: string | null;
  is_anonymous: boolean;
  card_holder_name: string | null;
  donor_created: boolean;
  gateway_name: string;
  gateway_ref: string | null;
  device: PaymentRow['device'];
}

const asDate = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));
const parse = <T>(v: T | string | null): T | null => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

function toRow(r: RawPayment): PaymentRow {
  return {
    id: Number(r.id),
    receiptNum: r.receipt_num,
    status: r.status,
    amountMinor: Number(r.amount_minor),
    currency: r.currency,
    method: r.method,
    createdAt: asDate(r.created_at),
    createdKey: r.created_key,
    processedAt: asDate(r.processed_at),
    paymentDate: asDate(r.payment_date),
    donor: parse(r.donor),
    collector: parse(r.collector),
    campaignNumber: r.campaign_number === null ? null : Number(r.campaign_number),
    campaignName: r.campaign_name,
    reasonNumbers: (r.reason_numbers ?? []).map(Number),
    scheduleNum: r.schedule_num === null ? null : Number(r.schedule_num),
    instalment: r.instalment_seq,
    source: r.source,
    deviceId: r.device_id,
    deviceName: r.device_name,
    brand: r.brand,
    last4: r.last4,
    voidedAt: r.voided_at === null ? null : asDate(r.voided_at),
    voidReason: r.void_reason,
    refundedMinor: Number(r.refunded_minor ?? 0),
    errorCode: r.error_code,
    errorMessage: r.error_message,
    uniqueTransactionId: r.unique_transaction_id,
    note: r.note,
    isAnonymous: r.is_anonymous,
    cardHolderName: r.card_holder_name,
    donorCreated: r.donor_created,
    gatewayName: r.gateway_name,
    gatewayRef: r.gateway_ref,
    device: parse(r.device),
  };
}

/** Payments matching the filter, newest first, after `after` (a page's last row), at most `limit`. */
export async function listPaymentRows(
  sql: Sql,
  orgId: number,
  f: PaymentFilter,
  after: PageKey | null,
  limit: number,
): Promise<PaymentRow[]> {
  const params: unknown[] = [orgId];
  const arg = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = ['p.org_id = $1'];
  if (f.from !== null) where.push(`p.created_at >= ${arg(f.from.toISOString())}`);
  if (f.to !== null) where.push(`p.created_at < ${arg(f.to.toISOString())}`);
  if (f.status !== null) where.push(`p.status = ${arg(f.status)}`);
  if (f.method !== null) where.push(`p.method = ${arg(f.method)}`);
  if (f.currency !== null) where.push(`p.currency = ${arg(f.currency)}`);
  if (f.source === 'apiKey') where.push('p.source_id IS NULL AND p.api_key_id IS NOT NULL');
  else if (f.source !== null) where.push(`src.kind = ${arg(f.source)}`);
  // Parties by scalar subqueries, so the payments are found through their own indexes.
  if (f.deviceId !== null) {
    where.push(
      `p.source_id = (SELECT source_id FROM devices WHERE org_id = $1 AND device_id = ${arg(f.deviceId)})`,
    );
  }
  if (f.collectorId !== null) {
    where.push(`p.collector_id = (SELECT id FROM collectors
      WHERE org_id = $1 AND upper(account_num) = upper(${arg(f.collectorId)}))`);
  }
  if (f.donorId !== null) {
    where.push(
      `p.donor_id = (SELECT id FROM donors WHERE org_id = $1 AND upper(account_num) = upper(${arg(f.donorId)}))`,
    );
  }
  if (f.campaignNumber !== null) {
    where.push(
      `p.campaign_id = (SELECT id FROM campaigns WHERE org_id = $1 AND number = ${arg(f.campaignNumber)})`,
    );
  }
  if (f.scheduleNum !== null) {
    where.push(
      `p.schedule_id = (SELECT id FROM schedules WHERE org_id = $1 AND schedule_num = ${arg(f.scheduleNum)})`,
    );
  }
  if (f.reasonNumber !== null) {
    where.push(`p.id IN (SELECT payment_id FROM payment_reasons WHERE reason_id =
      (SELECT id FROM reasons WHERE org_id = $1 AND number = ${arg(f.reasonNumber)}))`);
  }
  if (f.receiptNum) where.push(`p.receipt_num = ${arg(f.receiptNum)}`);
  if (f.donorIds) where.push(`p.donor_id = ANY(${arg(f.donorIds)}::bigint[])`);
  if (f.minMinor !== null) where.push(`p.amount_minor >= ${arg(f.minMinor)}`);
  if (f.maxMinor !== null) where.push(`p.amount_minor <= ${arg(f.maxMinor)}`);
  if (f.q !== null) {
    const exact = arg(f.q);
    const pattern = arg(`%${likeLiteral(f.q)}%`);
    where.push(`(p.receipt_num = ${exact}
      OR concat_ws(' ', d.first_name, d.last_name) ILIKE ${pattern}
      OR concat_ws(' ', d.first_name_hebrew, d.last_name_hebrew) ILIKE ${pattern}
      OR concat_ws(' ', d.last_name, d.first_name) ILIKE ${pattern}
      OR concat_ws(' ', d.last_name_hebrew, d.first_name_hebrew) ILIKE ${pattern}
      OR p.card_holder_name ILIKE ${pattern})`);
  }
  if (after !== null) {
    where.push(
      `(p.created_at, p.id) < ((${arg(after.createdAt)}::timestamp AT TIME ZONE 'UTC'), ${arg(after.id)})`,
    );
  }
  const rows = await sql.query<RawPayment>(
    `${SELECT_PAYMENT} WHERE ${where.join(' AND ')} ORDER BY p.created_at DESC, p.id DESC LIMIT ${arg(limit)}`,
    params,
  );
  return rows.map(toRow);
}

export async function findPaymentRow(
  sql: Sql,
  orgId: number,
  receiptNum: string,
): Promise<PaymentRow | null> {
  const [row] = await sql.query<RawPayment>(`${SELECT_PAYMENT} WHERE p.org_id = $1 AND p.receipt_num = $2`, [
    orgId,
    receiptNum,
  ]);
  return row ? toRow(row) : null;
}

export interface PaymentReasonRow {
  number: number;
  name: string | null;
  nameHebrew: string | null;
  amountMinor: number;
}

export async function paymentReasons(sql: Sql, paymentId: number): Promise<PaymentReasonRow[]> {
  const rows = await sql.query<{
    number: number;
    name: string | null;
    name_hebrew: string | null;
    amount_minor: string;
  }>(
    `SELECT r.number, r.name, r.name_hebrew, pr.amount_minor FROM payment_reasons pr
     JOIN reasons r ON r.id = pr.reason_id WHERE pr.payment_id = $1 ORDER BY r.number`,
    [paymentId],
  );
  return rows.map((r) => ({
    number: Number(r.number),
    name: r.name,
    nameHebrew: r.name_hebrew,
    amountMinor: Number(r.amount_minor),
  }));
}

export interface DeliveryRow {
  eventId: string;
  eventType: 'payment' | 'schedule' | 'void';
  url: string;
  status: 'pending' | 'delivered' | 'dead';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

/** The webhook deliveries of the events about this receipt (payment, void, schedule's first payment). */
export async function paymentDeliveries(sql: Sql, orgId: number, receiptNum: string): Promise<DeliveryRow[]> {
  const rows = await sql.query<{
    event_id: string;
    event_type: DeliveryRow['eventType'];
    url: string;
    status: DeliveryRow['status'];
    attempts: number;
    last_status_code: number | null;
    last_error: string | null;
    created_at: Date;
    delivered_at: Date | null;
  }>(
    `SELECT e.event_id, e.event_type, w.url, d.status, d.attempts, d.last_status_code, d.last_error,
            d.created_at, d.delivered_at
     FROM outbox_events e
     JOIN webhook_deliveries d ON d.event_id = e.id
     JOIN webhook_endpoints w ON w.id = d.endpoint_id
     WHERE e.org_id = $1 AND e.receipt_num = $2
     ORDER BY e.id, d.id`,
    [orgId, receiptNum],
  );
  return rows.map((r) => ({
    eventId: r.event_id,
    eventType: r.event_type,
    url: r.url,
    status: r.status,
    attempts: Number(r.attempts),
    lastStatusCode: r.last_status_code === null ? null : Number(r.last_status_code),
    lastError: r.last_error,
    createdAt: asDate(r.created_at),
    deliveredAt: r.delivered_at === null ? null : asDate(r.delivered_at),
  }));
}

export interface TotalsRowRaw {
  key: string | null;
  label: string | null;
  currency: string;
  sCount: number;
  sMinor: number;
  vCount: number;
  vMinor: number;
  /** Payments refunded in part or in full, and the money refunded (their gross is in s*). */
  rCount: number;
  rMinor: number;
  dCount: number;
  dMinor: number;
  eCount: number;
  eMinor: number;
}

export type GroupBy = 'day' | 'device' | 'collector' | 'campaign' | 'reason' | 'method' | 'currency';

/** One aggregate row: a group (its id), a currency and a status, counted and summed. */
interface Cell {
  gid: string | null;
  currency: string;
  status: string;
  n: string | number;
  minor: string | number;
  /** The money refunded of these payments. */
  rminor: string | number | null;
}

/** The column each grouping aggregates on, in the covering index `payments_totals`. */
const GROUP_COLUMN: Record<Exclude<GroupBy, 'reason'>, string> = {
  day: 'local_day',
  device: 'source_id',
  collector: 'collector_id',
  campaign: 'campaign_id',
  method: 'method',
  currency: 'currency',
};

const RANGE = "org_id = $1 AND created_at >= $2 AND created_at < $3 AND status <> 'Pending'";

/** Names of the groups found (a few rows), by group id. */
async function labels(
  sql: Sql,
  groupBy: GroupBy,
  ids: string[],
): Promise<Map<string, { key: string; label: string | null }>> {
  const out = new Map<string, { key: string; label: string | null }>();
  const numeric = ids.filter((id) => /^\d+$/.test(id));
  if (groupBy === 'day' || groupBy === 'method' || groupBy === 'currency') {
    for (const id of ids) out.set(id, { key: id, label: null });
    return out;
  }
  if (numeric.length === 0) return out;
  const queries: Record<'device' | 'collector' | 'campaign' | 'reason', string> = {
    device: `SELECT s.id::text AS gid, COALESCE(d.device_id, s.masked) AS key, COALESCE(d.name, s.name) AS label
             FROM sources s LEFT JOIN devices d ON d.source_id = s.id WHERE s.id = ANY($1::bigint[])`,
    collector: `SELECT id::text AS gid, account_num AS key,
                  NULLIF(COALESCE(NULLIF(concat_ws(' ', first_name, last_name), ''),
                                  concat_ws(' ', first_name_hebrew, last_name_hebrew)), '') AS label
                FROM collectors WHERE id = ANY($1::bigint[])`,
    campaign: `SELECT id::text AS gid, number::text AS key, COALESCE(name, friendly_name) AS label
               FROM campaigns WHERE id = ANY($1::bigint[])`,
    reason: `SELECT id::text AS gid, number::text AS key, COALESCE(name, name_hebrew) AS label
             FROM reasons WHERE id = ANY($1::bigint[])`,
  };
  const rows = await sql.query<{ gid: string; key: string; label: string | null }>(queries[groupBy], [
    numeric,
  ]);
  for (const r of rows) out.set(r.gid, { key: r.key, label: r.label });
  return out;
}

function pivot(
  cells: Cell[],
  name: (gid: string | null) => { key: string | null; label: string | null },
): TotalsRowRaw[] {
  const rows = new Map<string, TotalsRowRaw>();
  for (const c of cells) {
    const id = `${c.gid ?? ''}\u0000${c.currency}`;
    let row = rows.get(id);
    if (!row) {
      row = {
        ...name(c.gid),
        currency: c.currency,
        sCount: 0,
        sMinor: 0,
        vCount: 0,
        vMinor: 0,
        rCount: 0,
        rMinor: 0,
        dCount: 0,
        dMinor: 0,
        eCount: 0,
        eMinor: 0,
      };
      rows.set(id, row);
    }
    const n = Number(c.n);
    const minor = Number(c.minor);
    if (c.status === 'PartiallyRefunded' || c.status === 'Refunded') {
      // Charged (gross, in succeeded), and refunded (in part or in full).
      row.rCount += n;
      row.rMinor += Number(c.rminor ?? 0);
    }
    const part = {
      Success: 's',
      PartiallyRefunded: 's',
      Refunded: 's',
      Voided: 'v',
      Declined: 'd',
      Error: 'e',
    }[c.status] as 's' | 'v' | 'd' | 'e' | undefined;
    if (part === undefined) continue;
    row[`${part}Count`] += n;
    row[`${part}Minor`] += minor;
  }
  return [...rows.values()];
}

/**
 * Totals between two instants, grouped: one aggregate over the covering index of payments (by
 * reason: over payment_reasons' own index, plus the payments without reasons), grouped by
 * (group, currency, status); names are looked up for the few groups found. Returns the groups and
 * the totals per currency.
 */
export async function totals(
  sql: Sql,
  orgId: number,
  from: Date,
  to: Date,
  groupBy: GroupBy,
): Promise<{ groups: TotalsRowRaw[]; totals: TotalsRowRaw[] }> {
  const params = [orgId, from.toISOString(), to.toISOString()];
  let cells: Cell[];
  let all: Cell[];
  if (groupBy === 'reason') {
    const [shares, payments] = await Promise.all([
      sql.query<Cell>(
        // A reason's share of a refund is proportional to its share of the payment (rounded down).
        `SELECT gid::text AS gid, currency, status, n, minor, rminor FROM (
           SELECT reason_id AS gid, currency, status, count(*) AS n, sum(amount_minor) AS minor,
             sum(CASE WHEN status IN ('PartiallyRefunded', 'Refunded') THEN
               (SELECT pr.amount_minor * p.refunded_minor / p.amount_minor FROM payments p WHERE p.id = pr.payment_id)
             END) AS rminor
           FROM payment_reasons pr WHERE ${RANGE} GROUP BY reason_id, currency, status) g`,
        params,
      ),
      sql.query<Cell>(
        `SELECT CASE WHEN reason_count = 0 THEN 'none' END AS gid, currency, status, count(*) AS n, sum(amount_minor) AS minor,
           sum(refunded_minor) AS rminor
         FROM payments WHERE ${RANGE} GROUP BY reason_count = 0, currency, status`,
        params,
      ),
    ]);
    cells = [...shares, ...payments.filter((c) => c.gid === 'none').map((c) => ({ ...c, gid: null }))];
    all = payments.map((c) => ({ ...c, gid: null }));
  } else {
    // Grouped on the raw column; only the few groups are turned into text.
    cells = await sql.query<Cell>(
      `SELECT gid::text AS gid, currency, status, n, minor, rminor FROM (
         SELECT ${GROUP_COLUMN[groupBy]} AS gid, currency, status, count(*) AS n, sum(amount_minor) AS minor,
           sum(refunded_minor) AS rminor
         FROM payments WHERE ${RANGE} GROUP BY 1, currency, status) g`,
      params,
    );
    all = cells.map((c) => ({ ...c, gid: null }));
  }
  const ids = [...new Set(cells.flatMap((c) => (c.gid === null ? [] : [c.gid])))];
  const names = await labels(sql, groupBy, ids);
  const groups = pivot(cells, (gid) =>
    gid === null ? { key: null, label: null } : (names.get(gid) ?? { key: gid, label: null }),
  );
  const none = () => ({ key: null, label: null });
  return {
    groups: groups.sort(
      (a, b) =>
        (a.key === null ? 1 : 0) - (b.key === null ? 1 : 0) ||
        compareKeys(a.key, b.key, groupBy) ||
        a.currency.localeCompare(b.currency),
    ),
    totals: pivot(all, none).sort((a, b) => a.currency.localeCompare(b.currency)),
  };
}

/** Days and names in order; numbers (campaign, reason) by value. */
function compareKeys(a: string | null, b: string | null, groupBy: GroupBy): number {
  if (a === null || b === null) return 0;
  if (groupBy === 'campaign' || groupBy === 'reason') return Number(a) - Number(b);
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Successful payments (not voided, not refunded in full) of a donor per civil year of the
 * organisation and currency, net of what was refunded of them.
 */
export async function donorYearTotals(
  sql: Sql,
  orgId: number,
  donorId: number,
  tz: string,
): Promise<{ year: number; currency: string; count: number; amountMinor: number }[]> {
  const rows = await sql.query<{ year: number; currency: string; count: string; minor: string }>(
    `SELECT extract(year FROM created_at AT TIME ZONE $3)::int AS year, currency, count(*) AS count,
            sum(amount_minor - refunded_minor) AS minor
     FROM payments WHERE org_id = $1 AND donor_id = $2 AND status IN ('Success', 'PartiallyRefunded')
     GROUP BY 1, 2 ORDER BY 1 DESC, 2`,
    [orgId, donorId, tz],
  );
  return rows.map((r) => ({
    year: Number(r.year),
    currency: r.currency,
    count: Number(r.count),
    amountMinor: Number(r.minor),
  }));
}

/**
 * Donors whose name (English or Hebrew, either order), e-mail, phone digits or account number
 * contains `search`; by id, after `afterId`.
 */
export async function searchDonorIds(
  sql: Sql,
  orgId: number,
  search: string,
  afterId: number,
  limit: number,
): Promise<number[]> {
  const params: unknown[] = [orgId, afterId, limit];
  let where = '';
  if (search !== '') {
    params.push(`%${likeLiteral(search)}%`, search);
    const digits = search.replace(/\D/g, '');
    const phone =
      digits.length >= 3 && /^[\d\s()+\-.]+$/.test(search)
        ? `OR EXISTS (SELECT 1 FROM jsonb_array_elements(d.phones) ph
             WHERE regexp_replace(COALESCE(ph->>'phoneNumber', ''), '\\D', '', 'g') LIKE $6)`
        : '';
    if (phone) params.push(`%${digits}%`);
    where = `AND (upper(d.account_num) = upper($5) OR d.account_num = 'D' || $5
      OR concat_ws(' ', d.first_name, d.last_name) ILIKE $4
      OR concat_ws(' ', d.last_name, d.first_name) ILIKE $4
      OR concat_ws(' ', d.first_name_hebrew, d.last_name_hebrew) ILIKE $4
      OR concat_ws(' ', d.last_name_hebrew, d.first_name_hebrew) ILIKE $4
      OR EXISTS (SELECT 1 FROM jsonb_array_elements(d.emails) em WHERE em->>'emailAddress' ILIKE $4)
      ${phone})`;
  }
  const rows = await sql.query<{ id: string | number }>(
    `SELECT d.id FROM donors d WHERE d.org_id = $1 AND d.id > $2 ${where} ORDER BY d.id LIMIT $3`,
    params,
  );
  return rows.map((r) => Number(r.id));
}
