import type { Currency, Frequency, PaymentMethodId, ScheduleHandlingMode } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';

export type ScheduleStatus = 'pending' | 'active' | 'failed' | 'completed' | 'cancelled' | 'paused';

export interface NewSchedule {
  orgId: number;
  status: ScheduleStatus;
  handlingMode: ScheduleHandlingMode;
  frequency: Frequency;
  startDate: string;
  count: number;
  totalMinor: number;
  firstMinor: number;
  perPaymentMinor: number;
  currency: Currency;
  method: PaymentMethodId;
  /** brand, last4, expiry, card-on-file token; never a full number or CVV. */
  instrument: { brand: string | null; last4: string | null; expiry: string | null; token: string | null };
  donorId: number | null;
  campaignId: number | null;
  collectorId: number | null;
  reasons: { reasonId: number; amountMinor: number }[];
  specialDays: unknown;
  anniversaryRule: string;
  il: boolean;
  shabbatShift: boolean;
  sourceId: number | null;
  apiKeyId: number | null;
  uniqueTransactionId: string;
  note: string | null;
  device: unknown;
  isAnonymous: boolean;
}

export async function insertSchedule(tx: Sql, s: NewSchedule): Promise<{ id: number; scheduleNum: number }> {
  const [row] = await tx.query<{ id: string; schedule_num: string }>(
    `INSERT INTO schedules (org_id, schedule_num, status, handling_mode, frequency, start_date, payments_count,
       total_minor, first_minor, per_payment_minor, currency, method, instrument, donor_id, campaign_id, collector_id,
       reasons, special_days, anniversary_rule, source_id, api_key_id, unique_transaction_id, note, device, is_anonymous,
       il, shabbat_shift)
     VALUES ($1, nextval('schedule_seq'), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, $15,
       $16::jsonb, $17::jsonb, $18, $19, $20, $21, $22, $23::jsonb, $24, $25, $26)
     RETURNING id, schedule_num`,
    [
      s.orgId,
      s.status,
      s.handlingMode,
      s.frequency,
      s.startDate,
      s.count,
      s.totalMinor,
      s.firstMinor,
      s.perPaymentMinor,
      s.currency,
      s.method,
      JSON.stringify(s.instrument),
      s.donorId,
      s.campaignId,
      s.collectorId,
      JSON.stringify(s.reasons),
      JSON.stringify(s.specialDays),
      s.anniversaryRule,
      s.sourceId,
      s.apiKeyId,
      s.uniqueTransactionId,
      s.note,
      s.device === null ? null : JSON.stringify(s.device),
      s.isAnonymous,
      s.il,
      s.shabbatShift,
    ],
  );
  return { id: Number(row!.id), scheduleNum: Number(row!.schedule_num) };
}

export async function setScheduleStatus(tx: Sql, id: number, status: ScheduleStatus): Promise<void> {
  await tx.query('UPDATE schedules SET status = $2, updated_at = now() WHERE id = $1', [id, status]);
}

export async function setScheduleInstrumentToken(tx: Sql, id: number, token: string): Promise<void> {
  await tx.query(
    `UPDATE schedules SET instrument = jsonb_set(instrument, '{token}', to_jsonb($2::text)), updated_at = now() WHERE id = $1`,
    [id, token],
  );
}

// --- instalments (Internal and Gateway modes) ------------------------------------------------------

export interface PlannedInstalment {
  sequence: number;
  dueDate: string;
  nominalDate: string;
  hebrewDate: string;
  amountMinor: number;
}

export async function insertInstalments(
  tx: Sql,
  scheduleId: number,
  plan: readonly PlannedInstalment[],
  timeZone: string,
): Promise<void> {
  for (let i = 0; i < plan.length; i += 200) {
    const chunk = plan.slice(i, i + 200);
    const values: unknown[] = [];
    const rows = chunk.map((p, j) => {
      values.push(p.sequence, p.dueDate, p.nominalDate, p.hebrewDate, p.amountMinor);
      const b = j * 5 + 2;
      return `($1, $${b + 1}, $${b + 2}::date, $${b + 3}::date, $${b + 4}, $${b + 5}, 'pending', $${b + 2}::timestamp AT TIME ZONE $2)`;
    });
    await tx.query(
      `INSERT INTO schedule_instalments
         (schedule_id, sequence, due_date, nominal_date, hebrew_date, amount_minor, status, due_at)
       VALUES ${rows.join(', ')}`,
      [scheduleId, timeZone, ...values],
    );
  }
}

export async function markInstalmentCharged(
  tx: Sql,
  scheduleId: number,
  sequence: number,
  paymentId: number,
): Promise<void> {
  await tx.query(
    `UPDATE schedule_instalments SET status = 'charged', payment_id = $3, attempts = attempts + 1, last_error = NULL,
       updated_at = now()
     WHERE schedule_id = $1 AND sequence = $2`,
    [scheduleId, sequence, paymentId],
  );
}

export interface DueInstalment {
  id: number;
  scheduleId: number;
  sequence: number;
  dueDate: string;
  amountMinor: number;
  attempts: number;
  mode: 'Internal' | 'Gateway';
}

/**
 * Lock due instalments (their `due_at` reached) straight from the index: rows locked by another
 * scheduler are skipped. Paused and cancelled schedules have no `pending` instalments.
 */
export async function claimDueInstalments(tx: Sql, now: Date, limit: number): Promise<DueInstalment[]> {
  const rows = await tx.query<{
    id: string;
    schedule_id: string;
    sequence: number;
    due_date: string;
    amount_minor: string;
    attempts: number;
    handling_mode: 'Internal' | 'Gateway';
  }>(
    `WITH due AS (
       SELECT id FROM schedule_instalments WHERE status = 'pending' AND due_at <= $1
       ORDER BY due_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
     )
     SELECT i.id, i.schedule_id, i.sequence, to_char(i.due_date, 'YYYY-MM-DD') AS due_date, i.amount_minor, i.attempts,
       s.handling_mode
     FROM due JOIN schedule_instalments i ON i.id = due.id JOIN schedules s ON s.id = i.schedule_id
     ORDER BY i.due_at, i.id`,
    [now.toISOString(), limit],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    scheduleId: Number(r.schedule_id),
    sequence: r.sequence,
    dueDate: r.due_date,
    amountMinor: Number(r.amount_minor),
    attempts: r.attempts,
    mode: r.handling_mode,
  }));
}

/**
 * Lock the instalment's schedule without waiting: a schedule being cancelled, paused or changed
 * right now is `busy` (its instalment is tried again later), so the two never deadlock.
 */
export async function tryLockSchedule(tx: Sql, scheduleId: number): Promise<'active' | 'inactive' | 'busy'> {
  const [row] = await tx.query<{ status: ScheduleStatus }>(
    'SELECT status FROM schedules WHERE id = $1 FOR UPDATE SKIP LOCKED',
    [scheduleId],
  );
  if (!row) return 'busy';
  return row.status === 'active' ? 'active' : 'inactive';
}

export async function markInstalmentFailed(
  tx: Sql,
  id: number,
  error: string,
  retryAt: Date | null,
): Promise<void> {
  await tx.query(
    `UPDATE schedule_instalments SET attempts = attempts + 1, last_error = $2,
       status = CASE WHEN $3::timestamptz IS NULL THEN 'missed' ELSE 'pending' END,
       due_at = COALESCE($3::timestamptz, due_at), updated_at = now()
     WHERE id = $1`,
    [id, error, retryAt?.toISOString() ?? null],
  );
}

/** A schedule whose instalments are all settled is completed. */
export async function completeIfSettled(tx: Sql, scheduleId: number): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE schedules SET status = 'completed', updated_at = now()
     WHERE id = $1 AND status = 'active'
       AND NOT EXISTS (SELECT 1 FROM schedule_instalments WHERE schedule_id = $1
                       AND status IN ('pending', 'charging', 'paused'))
     RETURNING id`,
    [scheduleId],
  );
  return rows.length > 0;
}

export interface ScheduleForCharge {
  id: number;
  scheduleNum: number;
  currency: string;
  method: string;
  instrument: { brand: string | null; last4: string | null; expiry: string | null; token: string | null };
  donorId: number | null;
  campaignId: number | null;
  collectorId: number | null;
  reasons: { reasonId: number; amountMinor: number }[];
  note: string | null;
  isAnonymous: boolean;
  gatewayRef: string | null;
  uniqueTransactionId: string;
  credential: {
    type: 'apiKey' | 'source';
    id: number;
    masked: string;
    sandbox: boolean;
    kind: 'device' | 'external' | null;
    name: string | null;
  };
  org: {
    id: string | number;
    guid: string;
    name: string;
    currencies: string[];
    settings: unknown;
    gateway_rev: string | number;
  };
}

export async function loadScheduleForCharge(tx: Sql, scheduleId: number): Promise<ScheduleForCharge> {
  const [r] = await tx.query<{
    id: string;
    schedule_num: string;
    currency: string;
    method: string;
    instrument: ScheduleForCharge['instrument'];
    donor_id: string | null;
    campaign_id: string | null;
    collector_id: string | null;
    reasons: { reasonId: number; amountMinor: number }[];
    note: string | null;
    is_anonymous: boolean;
    gateway_ref: string | null;
    unique_transaction_id: string;
    source_id: string | null;
    api_key_id: string | null;
    masked: string;
    sandbox: boolean;
    source_kind: 'device' | 'external' | null;
    source_name: string | null;
    org_id: string;
    guid: string;
    org_name: string;
    currencies: string[];
    settings: unknown;
    gateway_rev: string | number;
  }>(
    `SELECT s.id, s.schedule_num, s.currency, s.method, s.instrument, s.donor_id, s.campaign_id, s.collector_id, s.reasons,
       s.note, s.is_anonymous, s.gateway_ref, s.unique_transaction_id, s.source_id, s.api_key_id,
       COALESCE(src.masked, k.masked) AS masked, COALESCE(src.sandbox, k.sandbox) AS sandbox,
       src.kind AS source_kind, src.name AS source_name,
       o.id AS org_id, o.guid, o.name AS org_name, o.currencies, o.settings, o.gateway_rev
     FROM schedules s JOIN orgs o ON o.id = s.org_id
       LEFT JOIN sources src ON src.id = s.source_id LEFT JOIN api_keys k ON k.id = s.api_key_id
     WHERE s.id = $1`,
    [scheduleId],
  );
  if (!r) throw new Error(`schedule ${scheduleId} not found`);
  const n = (v: string | null) => (v === null ? null : Number(v));
  return {
    id: Number(r.id),
    scheduleNum: Number(r.schedule_num),
    currency: r.currency,
    method: r.method,
    instrument: r.instrument,
    donorId: n(r.donor_id),
    campaignId: n(r.campaign_id),
    collectorId: n(r.collector_id),
    reasons: r.reasons ?? [],
    note: r.note,
    isAnonymous: r.is_anonymous,
    gatewayRef: r.gateway_ref,
    uniqueTransactionId: r.unique_transaction_id,
    credential: {
      type: r.source_id !== null ? 'source' : 'apiKey',
      id: Number(r.source_id ?? r.api_key_id),
      masked: r.masked,
      sandbox: r.sandbox,
      kind: r.source_kind,
      name: r.source_name,
    },
    org: {
      id: r.org_id,
      guid: String(r.guid),
      name: r.org_name,
      currencies: r.currencies,
      settings: r.settings,
      gateway_rev: r.gateway_rev,
    },
  };
}

export async function setScheduleGatewayRef(tx: Sql, id: number, ref: string): Promise<void> {
  await tx.query('UPDATE schedules SET gateway_ref = $2, updated_at = now() WHERE id = $1', [id, ref]);
}

// --- management ----------------------------------------------------------------------------------

export interface ScheduleSummaryRow {
  id: number;
  scheduleNum: number;
  status: ScheduleStatus;
  mode: string;
  frequency: string;
  startDate: string;
  count: number;
  totalMinor: number;
  firstMinor: number;
  perPaymentMinor: number;
  currency: string;
  method: string;
  brand: string | null;
  last4: string | null;
  donorAccount: string | null;
  nextDueDate: string | null;
  charged: number;
  missed: number;
}

const SUMMARY_SQL = `
  SELECT s.id, s.schedule_num, s.status, s.handling_mode, s.frequency, to_char(s.start_date, 'YYYY-MM-DD') AS start_date,
    s.payments_count, s.total_minor, s.first_minor, s.per_payment_minor, s.currency, s.method,
    s.instrument->>'brand' AS brand, s.instrument->>'last4' AS last4, d.account_num AS donor_account,
    (SELECT to_char(min(i.due_date), 'YYYY-MM-DD') FROM schedule_instalments i
      WHERE i.schedule_id = s.id AND i.status = 'pending') AS next_due_date,
    -- Successful payments of the schedule, whoever charged them: the first payment charged at
    -- creation (Integration mode keeps no instalment rows) and instalments; a voided one is not
    -- (a refunded one was charged: it counts).
    (SELECT count(*)::int FROM payments p WHERE p.schedule_id = s.id
       AND p.status IN ('Success', 'PartiallyRefunded', 'Refunded')) AS charged,
    (SELECT count(*)::int FROM schedule_instalments i WHERE i.schedule_id = s.id AND i.status = 'missed') AS missed
  FROM schedules s LEFT JOIN donors d ON d.id = s.donor_id`;

function toSummary(r: Record<string, unknown>): ScheduleSummaryRow {
  return {
    id: Number(r.id),
    scheduleNum: Number(r.schedule_num),
    status: r.status as ScheduleStatus,
    mode: String(r.handling_mode),
    frequency: String(r.frequency),
    startDate: String(r.start_date),
    count: Number(r.payments_count),
    totalMinor: Number(r.total_minor),
    firstMinor: Number(r.first_minor),
    perPaymentMinor: Number(r.per_payment_minor),
    currency: String(r.currency),
    method: String(r.method),
    brand: (r.brand as string | null) ?? null,
    last4: (r.last4 as string | null) ?? null,
    donorAccount: (r.donor_account as string | null) ?? null,
    nextDueDate: (r.next_due_date as string | null) ?? null,
    charged: Number(r.charged),
    missed: Number(r.missed),
  };
}

export async function listScheduleSummaries(
  sql: Sql,
  orgId: number,
  f: { donorAccount?: string | null; status?: string | null; limit: number },
): Promise<ScheduleSummaryRow[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `${SUMMARY_SQL} WHERE s.org_id = $1 AND ($2::text IS NULL OR upper(d.account_num) = upper($2))
       AND ($3::text IS NULL OR s.status = $3) ORDER BY s.schedule_num DESC LIMIT $4`,
    [orgId, f.donorAccount ?? null, f.status ?? null, f.limit],
  );
  return rows.map(toSummary);
}

export async function findScheduleSummary(
  sql: Sql,
  orgId: number,
  scheduleNum: number,
): Promise<ScheduleSummaryRow | null> {
  const [row] = await sql.query<Record<string, unknown>>(
    `${SUMMARY_SQL} WHERE s.org_id = $1 AND s.schedule_num = $2`,
    [orgId, scheduleNum],
  );
  return row ? toSummary(row) : null;
}

/** Lock a schedule row (waits for an instalment being charged right now). */
export async function lockSchedule(
  tx: Sql,
  orgId: number,
  scheduleNum: number,
): Promise<{ id: number; status: ScheduleStatus; method: string } | null> {
  const [row] = await tx.query<{ id: string; status: ScheduleStatus; method: string }>(
    'SELECT id, status, method FROM schedules WHERE org_id = $1 AND schedule_num = $2 FOR UPDATE',
    [orgId, scheduleNum],
  );
  return row ? { id: Number(row.id), status: row.status, method: row.method } : null;
}

/** Move instalments between states (pause, resume, cancel); `dueBefore` limits it to earlier dates. */
export async function setInstalmentsStatus(
  tx: Sql,
  scheduleId: number,
  from: readonly ('pending' | 'paused')[],
  to: 'pending' | 'paused' | 'cancelled' | 'skipped',
  dueBefore: string | null = null,
): Promise<number> {
  const rows = await tx.query(
    `UPDATE schedule_instalments SET status = $3, updated_at = now()
     WHERE schedule_id = $1 AND status = ANY($2::text[]) AND ($4::date IS NULL OR due_date < $4::date) RETURNING id`,
    [scheduleId, from, to, dueBefore],
  );
  return rows.length;
}

export async function setScheduleInstrument(
  tx: Sql,
  id: number,
  method: string,
  instrument: { brand: string | null; last4: string | null; expiry: string | null; token: string | null },
): Promise<void> {
  await tx.query(
    'UPDATE schedules SET method = $2, instrument = $3::jsonb, updated_at = now() WHERE id = $1',
    [id, method, JSON.stringify(instrument)],
  );
}

/** The instalment's charge is claimed (its Pending payment): no other scheduler takes it. */
export async function markInstalmentCharging(tx: Sql, id: number, paymentId: number): Promise<void> {
  await tx.query(
    `UPDATE schedule_instalments SET status = 'charging', payment_id = $2, updated_at = now() WHERE id = $1`,
    [id, paymentId],
  );
}

/** The charge never reached the gateway: the instalment is due again at `dueAt` (not an attempt). */
export async function returnInstalment(tx: Sql, id: number, dueAt: Date): Promise<void> {
  await tx.query(
    `UPDATE schedule_instalments SET status = 'pending', payment_id = NULL, due_at = $2, updated_at = now()
     WHERE id = $1 AND status = 'charging'`,
    [id, dueAt.toISOString()],
  );
}

/** Forget a schedule whose creation never reached the gateway (nothing stored under it yet). */
export async function deletePendingSchedule(tx: Sql, id: number): Promise<void> {
  await tx.query(`DELETE FROM schedules WHERE id = $1 AND status = 'pending'`, [id]);
}

/** An instalment's payment succeeded (by instalment id: the scheduler's and recovery's path). */
export async function markInstalmentChargedById(tx: Sql, id: number, paymentId: number): Promise<void> {
  await tx.query(
    `UPDATE schedule_instalments SET status = 'charged', payment_id = $2, attempts = attempts + 1, last_error = NULL,
       updated_at = now()
     WHERE id = $1`,
    [id, paymentId],
  );
}
