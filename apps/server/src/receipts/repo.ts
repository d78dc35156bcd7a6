/**
 * SQL of receipts: what a receipt tells (a payment with its parties and schedule), the e-mail
 * deliveries (the receipt outbox: written in the payment's transaction, claimed by the mailer),
 * and the gifts of a year for the year-end statements.
 */
import { randomUUID } from 'node:crypto';
import type { ReceiptDeliveryStatus, ReceiptKind, ReceiptLanguage } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';
import type { ReceiptDonor, ReceiptFacts, StatementGift } from './receipt-content.ts';

/** Channel notified (on commit) when receipt e-mails become due. */
export const RECEIPT_CHANNEL = 'kupah_receipts';

export interface ReceiptPayment {
  id: number;
  orgId: number;
  sourceId: number | null;
  deviceId: number | null;
  donorId: number | null;
  /** The donor's e-mail addresses as stored (the first one gets the receipt). */
  donorEmails: string[];
  facts: ReceiptFacts;
}

interface ScheduleRow {
  schedule_num: string;
  frequency: string;
  payments_count: number;
  first_minor: string;
  per_payment_minor: string;
  total_minor: string;
  next_date: string | null;
}

/**
 * A Success, Voided, PartiallyRefunded or Refunded payment as its receipt tells it (null: unknown,
 * or not a receipted state).
 */
export async function loadReceiptPayment(
  sql: Sql,
  orgId: number,
  receiptNum: string,
): Promise<ReceiptPayment | null> {
  const [p] = await sql.query<{
    id: string;
    org_id: string;
    receipt_num: string;
    status: ReceiptFacts['status'];
    amount_minor: string;
    refunded_minor: string;
    refunded_at: Date | null;
    currency: string;
    method: string;
    brand: string | null;
    last4: string | null;
    payment_date: Date;
    voided_at: Date | null;
    note: string | null;
    is_anonymous: boolean;
    source_id: string | null;
    device_id: string | null;
    donor_id: string | null;
    account_num: string | null;
    first_name: string | null;
    last_name: string | null;
    first_name_hebrew: string | null;
    last_name_hebrew: string | null;
    emails: { emailAddress?: string | null }[] | null;
    campaign_number: number | null;
    campaign_name: string | null;
    schedule_id: string | null;
    instalment_seq: number | null;
  }>(
    `SELECT p.id, p.org_id, p.receipt_num, p.status, p.amount_minor, p.refunded_minor, p.refunded_at, p.currency, p.method, p.brand, p.last4,
       p.payment_date, p.voided_at, p.note, p.is_anonymous, p.source_id, dv.id AS device_id, p.donor_id,
       d.account_num, d.first_name, d.last_name, d.first_name_hebrew, d.last_name_hebrew, d.emails,
       c.number AS campaign_number, COALESCE(c.name, c.friendly_name) AS campaign_name,
       p.schedule_id, p.instalment_seq
     FROM payments p
     LEFT JOIN donors d ON d.id = p.donor_id
     LEFT JOIN campaigns c ON c.id = p.campaign_id
     LEFT JOIN devices dv ON dv.source_id = p.source_id
     WHERE p.org_id = $1 AND upper(p.receipt_num) = upper($2) AND p.status IN ('Success', 'Voided', 'PartiallyRefunded', 'Refunded')`,
    [orgId, receiptNum.trim()],
  );
  if (!p) return null;
  const reasons = await sql.query<{
    number: number;
    name: string | null;
    name_hebrew: string | null;
    amount_minor: string;
  }>(
    `SELECT r.number, r.name, r.name_hebrew, pr.amount_minor FROM payment_reasons pr
     JOIN reasons r ON r.id = pr.reason_id WHERE pr.payment_id = $1 ORDER BY r.number`,
    [p.id],
  );
  let schedule: ReceiptFacts['schedule'] = null;
  if (p.schedule_id !== null) {
    // The next instalment: the first one planned after this payment that is still to be charged.
    const [s] = await sql.query<ScheduleRow>(
      `SELECT s.schedule_num, s.frequency, s.payments_count, s.first_minor, s.per_payment_minor, s.total_minor,
         (SELECT to_char(min(i.due_date), 'YYYY-MM-DD') FROM schedule_instalments i
          WHERE i.schedule_id = s.id AND i.status = 'pending' AND i.sequence > COALESCE($2::int, 1)) AS next_date
       FROM schedules s WHERE s.id = $1`,
      [p.schedule_id, p.instalment_seq],
    );
    if (s) {
      schedule = {
        scheduleNum: Number(s.schedule_num),
        frequency: s.frequency,
        count: Number(s.payments_count),
        firstMinor: Number(s.first_minor),
        perPaymentMinor: Number(s.per_payment_minor),
        totalMinor: Number(s.total_minor),
        instalment: p.instalment_seq ?? 1,
        nextDate: s.next_date,
      };
    }
  }
  const donor: ReceiptDonor | null = p.account_num
    ? {
        accountNum: p.account_num,
        firstName: p.first_name,
        lastName: p.last_name,
        firstNameHebrew: p.first_name_hebrew,
        lastNameHebrew: p.last_name_hebrew,
      }
    : null;
  return {
    id: Number(p.id),
    orgId: Number(p.org_id),
    sourceId: p.source_id === null ? null : Number(p.source_id),
    deviceId: p.device_id === null ? null : Number(p.device_id),
    donorId: p.donor_id === null ? null : Number(p.donor_id),
    donorEmails: (p.emails ?? []).map((e) => e.emailAddress ?? '').filter(Boolean),
    facts: {
      receiptNum: p.receipt_num,
      status: p.status,
      amountMinor: Number(p.amount_minor),
      currency: p.currency,
      method: p.method,
      brand: p.brand,
      last4: p.last4,
      paidAt: new Date(p.payment_date),
      voidedAt: p.voided_at === null ? null : new Date(p.voided_at),
      refundedMinor: Number(p.refunded_minor),
      refundedAt: p.refunded_at === null ? null : new Date(p.refunded_at),
      note: p.note,
      isAnonymous: p.is_anonymous,
      donor,
      campaign:
        p.campaign_number === null ? null : { number: Number(p.campaign_number), name: p.campaign_name },
      reasons: reasons.map((r) => ({
        number: Number(r.number),
        name: r.name,
        nameHebrew: r.name_hebrew,
        amountMinor: Number(r.amount_minor),
      })),
      schedule,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Deliveries (the receipt outbox)

export interface NewDelivery {
  orgId: number;
  paymentId: number | null;
  donorId: number | null;
  year: number | null;
  kind: ReceiptKind;
  to: string;
  language: ReceiptLanguage;
  at: Date;
}

export interface DeliveryRow {
  id: number;
  orgId: number;
  paymentId: number | null;
  receiptNum: string | null;
  donorId: number | null;
  donorAccount: string | null;
  year: number | null;
  kind: ReceiptKind;
  to: string;
  language: ReceiptLanguage;
  status: ReceiptDeliveryStatus;
  attempts: number;
  messageId: string;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
  nextAttemptAt: Date;
}

const DELIVERY_COLS = `r.id, r.org_id, r.payment_id, p.receipt_num, r.donor_id, d.account_num AS donor_account, r.year,
  r.kind, r.to_address, r.language, r.status, r.attempts, r.message_id, r.last_error, r.created_at, r.sent_at,
  r.next_attempt_at`;
const DELIVERY_FROM = `receipt_deliveries r LEFT JOIN payments p ON p.id = r.payment_id
  LEFT JOIN donors d ON d.id = r.donor_id`;

type RawDelivery = {
  id: string;
  org_id: string;
  payment_id: string | null;
  receipt_num: string | null;
  donor_id: string | null;
  donor_account: string | null;
  year: number | null;
  kind: ReceiptKind;
  to_address: string;
  language: ReceiptLanguage;
  status: ReceiptDeliveryStatus;
  attempts: number;
  message_id: string;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
  next_attempt_at: Date;
};

const toDelivery = (r: RawDelivery): DeliveryRow => ({
  id: Number(r.id),
  orgId: Number(r.org_id),
  paymentId: r.payment_id === null ? null : Number(r.payment_id),
  receiptNum: r.receipt_num,
  donorId: r.donor_id === null ? null : Number(r.donor_id),
  donorAccount: r.donor_account,
  year: r.year === null ? null : Number(r.year),
  kind: r.kind,
  to: r.to_address,
  language: r.language,
  status: r.status,
  attempts: Number(r.attempts),
  messageId: r.message_id,
  lastError: r.last_error,
  createdAt: new Date(r.created_at),
  sentAt: r.sent_at === null ? null : new Date(r.sent_at),
  nextAttemptAt: new Date(r.next_attempt_at),
});

/** The Message-ID of a delivery, fixed when it is written (a resend carries the same one). */
const newMessageId = (kind: ReceiptKind): string => `<${kind}.${randomUUID()}@receipts.kupah>`;

/**
 * Write a delivery in the caller's transaction and notify the mailers (delivered on commit), in
 * one statement. Null when the same one exists (receipt or correction to that address; a copy to
 * that address still waiting; the statement of that donor and year to that address).
 */
export async function insertDelivery(tx: Sql, d: NewDelivery): Promise<number | null> {
  const [row] = await tx.query<{ id: string | null }>(
    `WITH ins AS (
       INSERT INTO receipt_deliveries (org_id, payment_id, donor_id, year, kind, to_address, language, status,
         next_attempt_at, message_id, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $8)
       ON CONFLICT DO NOTHING RETURNING id
     )
     SELECT (SELECT id FROM ins) AS id,
       CASE WHEN EXISTS (SELECT 1 FROM ins) THEN pg_notify('${RECEIPT_CHANNEL}', '') END AS notified`,
    [
      d.orgId,
      d.paymentId,
      d.donorId,
      d.year,
      d.kind,
      d.to,
      d.language,
      d.at.toISOString(),
      newMessageId(d.kind),
    ],
  );
  return row?.id == null ? null : Number(row.id);
}

/**
 * After a void (or a refund: `refundId`, one correction per refund): a correction to every address
 * the receipt went (or was to go) to, in the language it was in, in the void's (refund's) transaction.
 */
export async function insertCorrections(
  tx: Sql,
  paymentId: number,
  at: Date,
  refundId: number | null = null,
): Promise<number> {
  const rows = await tx.query<{ id: string }>(
    `INSERT INTO receipt_deliveries (org_id, payment_id, kind, to_address, language, status, next_attempt_at,
       message_id, created_at, refund_id)
     SELECT DISTINCT ON (lower(r.to_address)) r.org_id, r.payment_id, 'correction', r.to_address, r.language,
       'pending', $2::timestamptz, '<correction.' || gen_random_uuid() || '@receipts.kupah>', $2::timestamptz,
       $3::bigint
     FROM receipt_deliveries r WHERE r.payment_id = $1 AND r.kind = 'receipt'
     ORDER BY lower(r.to_address), r.id
     ON CONFLICT DO NOTHING RETURNING id`,
    [paymentId, at.toISOString(), refundId],
  );
  if (rows.length > 0) await tx.query(`SELECT pg_notify('${RECEIPT_CHANNEL}', '')`);
  return rows.length;
}

export async function findDelivery(sql: Sql, orgId: number, id: number): Promise<DeliveryRow | null> {
  const [row] = await sql.query<RawDelivery>(
    `SELECT ${DELIVERY_COLS} FROM ${DELIVERY_FROM} WHERE r.org_id = $1 AND r.id = $2`,
    [orgId, id],
  );
  return row ? toDelivery(row) : null;
}

/** The copy of a receipt already waiting for this address (a second request adds none). */
export async function findPendingCopy(sql: Sql, paymentId: number, to: string): Promise<DeliveryRow | null> {
  const [row] = await sql.query<RawDelivery>(
    `SELECT ${DELIVERY_COLS} FROM ${DELIVERY_FROM}
     WHERE r.payment_id = $1 AND r.kind = 'copy' AND r.status = 'pending' AND lower(r.to_address) = lower($2)`,
    [paymentId, to],
  );
  return row ? toDelivery(row) : null;
}

export async function listDeliveries(
  sql: Sql,
  orgId: number,
  f: { status?: ReceiptDeliveryStatus | undefined; receiptNum?: string | undefined; limit: number },
): Promise<DeliveryRow[]> {
  const rows = await sql.query<RawDelivery>(
    `SELECT ${DELIVERY_COLS} FROM ${DELIVERY_FROM}
     WHERE r.org_id = $1 AND ($2::text IS NULL OR r.status = $2) AND ($3::text IS NULL OR upper(p.receipt_num) = upper($3))
     ORDER BY r.created_at DESC, r.id DESC LIMIT $4`,
    [orgId, f.status ?? null, f.receiptNum ?? null, f.limit],
  );
  return rows.map(toDelivery);
}

/**
 * Claim due deliveries in one statement: rows another mailer holds are skipped, and each claimed
 * row is leased (its next attempt moved to `leaseUntil`) so no other instance sends the same
 * attempt; if this process dies mid-send, the lease runs out and the e-mail is sent again.
 */
export async function claimDue(sql: Sql, now: Date, leaseUntil: Date, limit: number): Promise<DeliveryRow[]> {
  const rows = await sql.query<RawDelivery>(
    `WITH due AS (
       SELECT id FROM receipt_deliveries WHERE status = 'pending' AND next_attempt_at <= $1
       ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED
     ), upd AS (
       UPDATE receipt_deliveries r SET attempts = r.attempts + 1, next_attempt_at = $2, updated_at = now()
       FROM due WHERE r.id = due.id
       RETURNING r.*
     )
     SELECT ${DELIVERY_COLS} FROM upd r LEFT JOIN payments p ON p.id = r.payment_id
       LEFT JOIN donors d ON d.id = r.donor_id`,
    [now.toISOString(), leaseUntil.toISOString(), limit],
  );
  return rows.map(toDelivery);
}

/** Accepted by the mail server (guarded by the attempt claimed: a stale attempt changes nothing). */
export async function markSent(
  sql: Sql,
  d: Pick<DeliveryRow, 'id' | 'attempts'>,
  at: Date,
  response: string | null,
): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE receipt_deliveries SET status = 'sent', sent_at = $3, smtp_response = $4, last_error = NULL,
       updated_at = now()
     WHERE id = $1 AND attempts = $2 AND status = 'pending' RETURNING id`,
    [d.id, d.attempts, at.toISOString(), response?.slice(0, 500) ?? null],
  );
  return rows.length > 0;
}

/** Not sent: retried at `nextAt`, or final (`bounced`, `failed`) when `nextAt` is null. */
export async function markNotSent(
  sql: Sql,
  d: Pick<DeliveryRow, 'id' | 'attempts'>,
  error: string,
  next: { at: Date } | { final: 'bounced' | 'failed' },
): Promise<void> {
  await sql.query(
    `UPDATE receipt_deliveries SET status = $3, next_attempt_at = COALESCE($4::timestamptz, next_attempt_at),
       last_error = $5, updated_at = now()
     WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
    [
      d.id,
      d.attempts,
      'final' in next ? next.final : 'pending',
      'at' in next ? next.at.toISOString() : null,
      error.slice(0, 500),
    ],
  );
}

export async function countPendingDeliveries(sql: Sql): Promise<number> {
  const [row] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM receipt_deliveries WHERE status = 'pending'`,
  );
  return Number(row!.n);
}

// ---------------------------------------------------------------------------------------------
// Year-end statements

export interface StatementDonor extends ReceiptDonor {
  id: number;
  emails: string[];
}

/**
 * Every successful gift of a year (the organisation's civil year, by the donation's date) of the
 * donors who gave in it (of one donor with `donorId`), ordered by donor, then date.
 */
export async function giftsOfYear(
  sql: Sql,
  orgId: number,
  year: number,
  timezone: string,
  donorId: number | null = null,
): Promise<{ donor: StatementDonor; gifts: StatementGift[] }[]> {
  const rows = await sql.query<{
    donor_id: string;
    account_num: string;
    first_name: string | null;
    last_name: string | null;
    first_name_hebrew: string | null;
    last_name_hebrew: string | null;
    emails: { emailAddress?: string | null }[] | null;
    receipt_num: string;
    payment_date: Date;
    amount_minor: string;
    currency: string;
    campaign: string | null;
    reasons: { name: string | null; nameHebrew: string | null }[] | null;
  }>(
    `SELECT p.donor_id, d.account_num, d.first_name, d.last_name, d.first_name_hebrew, d.last_name_hebrew, d.emails,
       p.receipt_num, p.payment_date, p.amount_minor - p.refunded_minor AS amount_minor, p.currency,
       COALESCE(c.name, c.friendly_name) AS campaign,
       CASE WHEN p.reason_count > 0 THEN (SELECT json_agg(json_build_object('name', r.name, 'nameHebrew', r.name_hebrew) ORDER BY r.number)
         FROM payment_reasons pr JOIN reasons r ON r.id = pr.reason_id WHERE pr.payment_id = p.id) END AS reasons
     FROM payments p
     JOIN donors d ON d.id = p.donor_id
     LEFT JOIN campaigns c ON c.id = p.campaign_id
     WHERE p.org_id = $1 AND p.status IN ('Success', 'PartiallyRefunded') AND p.donor_id IS NOT NULL
       AND p.payment_date >= make_date($2, 1, 1)::timestamp AT TIME ZONE $3
       AND p.payment_date < make_date($2 + 1, 1, 1)::timestamp AT TIME ZONE $3
       AND ($4::bigint IS NULL OR p.donor_id = $4)
     ORDER BY p.donor_id, p.payment_date, p.id`,
    [orgId, year, timezone, donorId],
  );
  const out: { donor: StatementDonor; gifts: StatementGift[] }[] = [];
  for (const r of rows) {
    const id = Number(r.donor_id);
    let last = out.at(-1);
    if (last?.donor.id !== id) {
      last = {
        donor: {
          id,
          accountNum: r.account_num,
          firstName: r.first_name,
          lastName: r.last_name,
          firstNameHebrew: r.first_name_hebrew,
          lastNameHebrew: r.last_name_hebrew,
          emails: (r.emails ?? []).map((e) => e.emailAddress ?? '').filter(Boolean),
        },
        gifts: [],
      };
      out.push(last);
    }
    last.gifts.push({
      receiptNum: r.receipt_num,
      paidAt: new Date(r.payment_date),
      amountMinor: Number(r.amount_minor),
      currency: r.currency,
      campaign: r.campaign,
      reasons: r.reasons ?? [],
    });
  }
  return out;
}

/** A donor of the organisation by account number (any case). */
export async function findDonorByAccount(
  sql: Sql,
  orgId: number,
  accountNum: string,
): Promise<StatementDonor | null> {
  const [r] = await sql.query<{
    id: string;
    account_num: string;
    first_name: string | null;
    last_name: string | null;
    first_name_hebrew: string | null;
    last_name_hebrew: string | null;
    emails: { emailAddress?: string | null }[] | null;
  }>(
    `SELECT id, account_num, first_name, last_name, first_name_hebrew, last_name_hebrew, emails FROM donors
     WHERE org_id = $1 AND upper(account_num) = upper($2)`,
    [orgId, accountNum.trim()],
  );
  return r
    ? {
        id: Number(r.id),
        accountNum: r.account_num,
        firstName: r.first_name,
        lastName: r.last_name,
        firstNameHebrew: r.first_name_hebrew,
        lastNameHebrew: r.last_name_hebrew,
        emails: (r.emails ?? []).map((e) => e.emailAddress ?? '').filter(Boolean),
      }
    : null;
}
