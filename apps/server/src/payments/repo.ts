import type { Currency, PaymentMethodId } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';

export type PaymentStatus =
  | 'Pending'
  | 'Success'
  | 'Declined'
  | 'Error'
  | 'Voided'
  | 'PartiallyRefunded'
  | 'Refunded';

/** A payment as claimed before the gateway is called: `Pending`, its request in flight ('sending'). */
export interface NewPayment {
  orgId: number;
  amountMinor: number;
  currency: Currency;
  method: PaymentMethodId;
  paymentDate: string;
  processedAt: string;
  donorId: number | null;
  donorCreated: boolean;
  campaignId: number | null;
  collectorId: number | null;
  scheduleId: number | null;
  instalmentSeq: number | null;
  sourceId: number | null;
  apiKeyId: number | null;
  uniqueTransactionId: string | null;
  note: string | null;
  brand: string | null;
  last4: string | null;
  expiry: string | null;
  cardHolderName: string | null;
  token: string | null;
  gatewayName: string;
  /** The key the gateway is called with (and asked about by recovery). */
  gatewayKey: string;
  isAnonymous: boolean;
  device: unknown;
  reasons: { reasonId: number; amountMinor: number }[];
  /** What recording the outcome needs besides the gateway's answer (never card data). */
  context: unknown;
  /** When recovery may take the payment over if the request that claimed it has not finished. */
  recoveryAfter: Date;
  /** The idempotency record of the request that claims it (null: none, e.g. an instalment). */
  idempotencyKey: string | null;
}

/**
 * Insert a Pending payment and its reason split, and point the request's idempotency record at it
 * (`idempotencyKey`, when it has one); returns its id and new receipt number.
 */
export async function insertPayment(tx: Sql, p: NewPayment): Promise<{ id: number; receiptNum: string }> {
  const [row] = await tx.query<{ id: string; receipt_num: string }>(
    `WITH ins AS (
       INSERT INTO payments (org_id, receipt_num, status, amount_minor, currency, method, payment_date, processed_at,
         donor_id, donor_created, campaign_id, collector_id, schedule_id, instalment_seq, source_id, api_key_id,
         unique_transaction_id, note, brand, last4, expiry, card_holder_name, token, gateway_name, gateway_key,
         is_anonymous, device, pending_context, gateway_state, gateway_sent_at, recovery_after, created_at, reason_count)
       VALUES ($1, 'R' || nextval('receipt_seq'), 'Pending', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
         $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25::jsonb, $26::jsonb, 'sending', $6, $27, $6, $29)
       RETURNING id, receipt_num
     ), linked AS (
       UPDATE idempotency_keys SET payment_id = (SELECT id FROM ins) WHERE org_id = $1 AND key = $28
     )
     SELECT id, receipt_num FROM ins`,
    [
      p.orgId,
      p.amountMinor,
      p.currency,
      p.method,
      p.paymentDate,
      p.processedAt,
      p.donorId,
      p.donorCreated,
      p.campaignId,
      p.collectorId,
      p.scheduleId,
      p.instalmentSeq,
      p.sourceId,
      p.apiKeyId,
      p.uniqueTransactionId,
      p.note,
      p.brand,
      p.last4,
      p.expiry,
      p.cardHolderName,
      p.token,
      p.gatewayName,
      p.gatewayKey,
      p.isAnonymous,
      p.device === null ? null : JSON.stringify(p.device),
      JSON.stringify(p.context),
      p.recoveryAfter.toISOString(),
      p.idempotencyKey,
      p.reasons.length,
    ],
  );
  const id = Number(row!.id);
  for (const r of p.reasons) {
    await tx.query('INSERT INTO payment_reasons (payment_id, reason_id, amount_minor) VALUES ($1, $2, $3)', [
      id,
      r.reasonId,
      r.amountMinor,
    ]);
  }
  return { id, receiptNum: row!.receipt_num };
}

export interface PaymentForVoid {
  id: number;
  receiptNum: string;
  status: PaymentStatus;
  method: string;
  gatewayName: string;
  gatewayRef: string | null;
  voidedAt: Date | null;
}

interface PaymentForVoidRow {
  id: string;
  receipt_num: string;
  status: PaymentStatus;
  method: string;
  gateway_name: string;
  gateway_ref: string | null;
  voided_at: Date | null;
}

const toPaymentForVoid = (row: PaymentForVoidRow): PaymentForVoid => ({
  id: Number(row.id),
  receiptNum: row.receipt_num,
  status: row.status,
  method: row.method,
  gatewayName: row.gateway_name,
  gatewayRef: row.gateway_ref,
  voidedAt: row.voided_at,
});

const VOID_COLS = 'id, receipt_num, status, method, gateway_name, gateway_ref, voided_at';

export async function findPaymentByReceipt(
  sql: Sql,
  orgId: number,
  receiptNum: string,
): Promise<PaymentForVoid | null> {
  const [row] = await sql.query<PaymentForVoidRow>(
    `SELECT ${VOID_COLS} FROM payments WHERE org_id = $1 AND upper(receipt_num) = upper($2)`,
    [orgId, receiptNum],
  );
  return row ? toPaymentForVoid(row) : null;
}

export async function lockPaymentById(tx: Sql, orgId: number, id: number): Promise<PaymentForVoid | null> {
  const [row] = await tx.query<PaymentForVoidRow>(
    `SELECT ${VOID_COLS} FROM payments WHERE org_id = $1 AND id = $2 FOR UPDATE`,
    [orgId, id],
  );
  return row ? toPaymentForVoid(row) : null;
}

export async function markVoided(tx: Sql, id: number, at: string, reason: string | null): Promise<void> {
  await tx.query(
    `UPDATE payments SET status = 'Voided', voided_at = $2, void_reason = $3 WHERE id = $1 AND status = 'Success'`,
    [id, at, reason],
  );
}

export async function countPayments(sql: Sql, orgId: number): Promise<number> {
  const [row] = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM payments WHERE org_id = $1', [
    orgId,
  ]);
  return Number(row!.n);
}

export interface PaymentOutcome {
  status: 'Success' | 'Declined' | 'Error';
  gatewayRef: string | null;
  token: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  processedAt: string;
}

/**
 * Record the gateway's outcome of a Pending payment and (`answer`) store the idempotency answer of
 * the request it was for, in one statement. False when it was no longer Pending (another request
 * or the recovery worker recorded it first): the caller then answers what was recorded.
 */
export async function recordOutcome(
  sql: Sql,
  id: number,
  o: PaymentOutcome,
  answer: { orgId: number; key: string; body: unknown } | null = null,
): Promise<boolean> {
  const [row] = await sql.query<{ recorded: boolean }>(
    `WITH p AS (
       UPDATE payments SET status = $2, gateway_ref = $3, token = COALESCE($4, token), error_code = $5,
         error_message = $6, processed_at = $7, gateway_state = NULL, recovery_after = NULL,
         pending_context = NULL, resolved_at = now()
       WHERE id = $1 AND status = 'Pending' RETURNING id
     ), k AS (
       UPDATE idempotency_keys SET status_code = 200, response = $10::json
       WHERE org_id = $8 AND key = $9 AND EXISTS (SELECT 1 FROM p)
     )
     SELECT EXISTS (SELECT 1 FROM p) AS recorded`,
    [
      id,
      o.status,
      o.gatewayRef,
      o.token,
      o.errorCode,
      o.errorMessage,
      o.processedAt,
      answer?.orgId ?? null,
      answer?.key ?? null,
      answer ? JSON.stringify(answer.body) : null,
    ],
  );
  return row?.recorded === true;
}

/** The gateway call ended without an outcome: recovery asks the gateway after `recoveryAfter`. */
export async function markInDoubt(sql: Sql, id: number, recoveryAfter: Date, note: string): Promise<void> {
  await sql.query(
    `UPDATE payments SET gateway_state = 'in_doubt', recovery_after = $2, recovery_note = $3
     WHERE id = $1 AND status = 'Pending'`,
    [id, recoveryAfter.toISOString(), note],
  );
}

/** Lock a payment if it is still Pending (false: it was recorded, or released, meanwhile). */
export async function lockPendingPayment(tx: Sql, id: number): Promise<boolean> {
  const rows = await tx.query(`SELECT id FROM payments WHERE id = $1 AND status = 'Pending' FOR UPDATE`, [
    id,
  ]);
  return rows.length > 0;
}

/**
 * Forget a Pending payment (locked by `lockPendingPayment`) whose request never charged anything,
 * with its reason split. Whatever refers to it must have let go of it first.
 */
export async function deletePendingPayment(tx: Sql, id: number): Promise<void> {
  await tx.query('DELETE FROM payment_reasons WHERE payment_id = $1', [id]);
  await tx.query(`DELETE FROM payments WHERE id = $1 AND status = 'Pending'`, [id]);
}

export interface PendingPayment {
  id: number;
  orgId: number;
  receiptNum: string;
  amountMinor: number;
  currency: string;
  method: string;
  gatewayName: string;
  gatewayKey: string;
  gatewayState: 'sending' | 'in_doubt';
  sentAt: Date;
  recoveryAttempts: number;
  context: unknown;
  /** The organisation's gateway configuration revision (which gateway adapter to ask). */
  orgGatewayRev: number;
}

interface PendingRow {
  id: string;
  org_id: string;
  receipt_num: string;
  amount_minor: string;
  currency: string;
  method: string;
  gateway_name: string;
  gateway_key: string;
  gateway_state: 'sending' | 'in_doubt';
  gateway_sent_at: Date | string;
  recovery_attempts: number;
  pending_context: unknown;
  gateway_rev?: number;
}

const toPending = (r: PendingRow): PendingPayment => ({
  id: Number(r.id),
  orgId: Number(r.org_id),
  receiptNum: r.receipt_num,
  amountMinor: Number(r.amount_minor),
  currency: r.currency,
  method: r.method,
  gatewayName: r.gateway_name,
  gatewayKey: r.gateway_key,
  gatewayState: r.gateway_state,
  sentAt: new Date(r.gateway_sent_at),
  recoveryAttempts: Number(r.recovery_attempts),
  context: r.pending_context,
  orgGatewayRev: r.gateway_rev == null ? -1 : Number(r.gateway_rev),
});

const PENDING_COLS = `id, org_id, receipt_num, amount_minor, currency, method, gateway_name, gateway_key,
  gateway_state, gateway_sent_at, recovery_attempts, pending_context`;

/**
 * Take up to `limit` Pending payments whose time has come (in doubt, or claimed by a request that
 * never finished) for recovery: each is leased until `leaseUntil`, so other instances skip it
 * (FOR UPDATE SKIP LOCKED) and take it over only if this one dies.
 */
export async function leasePendingPayments(
  sql: Sql,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<PendingPayment[]> {
  const rows = await sql.query<PendingRow>(
    `UPDATE payments p SET recovery_after = $2, recovery_attempts = p.recovery_attempts + 1
     FROM (SELECT id FROM payments WHERE status = 'Pending' AND recovery_after <= $1
           ORDER BY recovery_after, id LIMIT $3 FOR UPDATE SKIP LOCKED) due
     WHERE p.id = due.id
     RETURNING p.${PENDING_COLS}, (SELECT gateway_rev FROM orgs o WHERE o.id = p.org_id) AS gateway_rev`,
    [now.toISOString(), leaseUntil.toISOString(), limit],
  );
  return rows.map(toPending);
}

/** Recovery could not tell yet (the gateway is down): try again after `retryAt`. */
export async function postponeRecovery(sql: Sql, id: number, retryAt: Date, note: string): Promise<void> {
  await sql.query(
    `UPDATE payments SET recovery_after = $2, recovery_note = $3, gateway_state = 'in_doubt'
     WHERE id = $1 AND status = 'Pending'`,
    [id, retryAt.toISOString(), note],
  );
}

/** How many payments are Pending (a gauge for /metrics and the admin CLI). */
export async function countPending(
  sql: Sql,
): Promise<{ total: number; inDoubt: number; oldest: Date | null }> {
  const [row] = await sql.query<{ total: number; in_doubt: number; oldest: Date | string | null }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE gateway_state = 'in_doubt')::int AS in_doubt,
       min(gateway_sent_at) AS oldest FROM payments WHERE status = 'Pending'`,
  );
  return {
    total: Number(row?.total ?? 0),
    inDoubt: Number(row?.in_doubt ?? 0),
    oldest: row?.oldest ? new Date(row.oldest) : null,
  };
}

/**
 * Schedules left `pending` by a request that died while verifying the instrument (no payment, so
 * no money moved): forgotten with their unfinished idempotency key, so the id can be used again.
 */
export async function releaseStalePendingSchedules(
  tx: Sql,
  olderThanMs: number,
  limit: number,
): Promise<number> {
  const rows = await tx.query<{ id: string; org_id: string; unique_transaction_id: string }>(
    `SELECT s.id, s.org_id, s.unique_transaction_id FROM schedules s
      WHERE s.status = 'pending' AND s.created_at < now() - make_interval(secs => $1)
        AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.schedule_id = s.id)
      ORDER BY s.id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [olderThanMs / 1000, limit],
  );
  for (const r of rows) {
    await tx.query('DELETE FROM schedules WHERE id = $1', [r.id]);
    await tx.query('DELETE FROM idempotency_keys WHERE org_id = $1 AND key = $2 AND status_code IS NULL', [
      r.org_id,
      r.unique_transaction_id,
    ]);
  }
  return rows.length;
}

export interface PendingSummary {
  receiptNum: string;
  amountMinor: number;
  currency: string;
  method: string;
  gatewayName: string;
  state: 'sending' | 'in_doubt';
  since: string;
  nextCheckAt: string | null;
  recoveryAttempts: number;
  note: string | null;
}

/** An organisation's Pending payments, oldest first (what the admin CLI shows as being confirmed). */
export async function listPendingPayments(sql: Sql, orgId: number, limit: number): Promise<PendingSummary[]> {
  const rows = await sql.query<{
    receipt_num: string;
    amount_minor: string;
    currency: string;
    method: string;
    gateway_name: string;
    gateway_state: 'sending' | 'in_doubt';
    gateway_sent_at: Date | string;
    recovery_after: Date | string | null;
    recovery_attempts: number;
    recovery_note: string | null;
  }>(
    `SELECT receipt_num, amount_minor, currency, method, gateway_name, gateway_state, gateway_sent_at,
       recovery_after, recovery_attempts, recovery_note
     FROM payments WHERE org_id = $1 AND status = 'Pending' ORDER BY gateway_sent_at, id LIMIT $2`,
    [orgId, limit],
  );
  return rows.map((r) => ({
    receiptNum: r.receipt_num,
    amountMinor: Number(r.amount_minor),
    currency: r.currency,
    method: r.method,
    gatewayName: r.gateway_name,
    state: r.gateway_state,
    since: new Date(r.gateway_sent_at).toISOString(),
    nextCheckAt: r.recovery_after ? new Date(r.recovery_after).toISOString() : null,
    recoveryAttempts: Number(r.recovery_attempts),
    note: r.recovery_note,
  }));
}

// ---------------------------------------------------------------------------------------------
// Refunds

/** A payment as a refund sees it, locked: what was charged, refunded, and is being refunded. */
export interface PaymentForRefund {
  id: number;
  receiptNum: string;
  status: PaymentStatus;
  amountMinor: number;
  refundedMinor: number;
  /** Refunds of it still `pending` (claimed, outcome not recorded): they count against what remains. */
  pendingMinor: number;
  currency: string;
  method: string;
  gatewayName: string;
  gatewayRef: string | null;
}

/**
 * Lock a payment of the organisation (FOR UPDATE: concurrent refunds of it queue here) and read
 * what its refunds hold, after the lock, so a refund committed meanwhile is counted.
 */
export async function lockPaymentForRefund(
  tx: Sql,
  orgId: number,
  receiptNum: string,
): Promise<PaymentForRefund | null> {
  const [row] = await tx.query<{
    id: string;
    receipt_num: string;
    status: PaymentStatus;
    amount_minor: string;
    refunded_minor: string;
    currency: string;
    method: string;
    gateway_name: string;
    gateway_ref: string | null;
  }>(
    `SELECT id, receipt_num, status, amount_minor, refunded_minor, currency, method, gateway_name, gateway_ref
     FROM payments WHERE org_id = $1 AND upper(receipt_num) = upper($2) FOR UPDATE`,
    [orgId, receiptNum],
  );
  if (!row) return null;
  const [pending] = await tx.query<{ minor: string | null }>(
    `SELECT sum(amount_minor) AS minor FROM refunds WHERE payment_id = $1 AND status = 'pending'`,
    [row.id],
  );
  return {
    id: Number(row.id),
    receiptNum: row.receipt_num,
    status: row.status,
    amountMinor: Number(row.amount_minor),
    refundedMinor: Number(row.refunded_minor),
    pendingMinor: Number(pending?.minor ?? 0),
    currency: row.currency,
    method: row.method,
    gatewayName: row.gateway_name,
    gatewayRef: row.gateway_ref,
  };
}

export interface NewRefund {
  orgId: number;
  paymentId: number;
  amountMinor: number;
  currency: string;
  reason: string;
  uniqueTransactionId: string;
  actor: string | null;
  gatewayName: string;
  gatewayKey: string;
  context: unknown;
  at: Date;
  recoveryAfter: Date;
}

/** Claim a refund: `pending`, its gateway request about to be sent. */
export async function insertRefund(tx: Sql, r: NewRefund): Promise<number> {
  const [row] = await tx.query<{ id: string }>(
    `INSERT INTO refunds (org_id, payment_id, amount_minor, currency, reason, status, unique_transaction_id, actor,
       gateway_name, gateway_key, gateway_state, gateway_sent_at, recovery_after, pending_context, created_at)
     VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $8, $9, 'sending', $10, $11, $12::jsonb, $10)
     RETURNING id`,
    [
      r.orgId,
      r.paymentId,
      r.amountMinor,
      r.currency,
      r.reason,
      r.uniqueTransactionId,
      r.actor,
      r.gatewayName,
      r.gatewayKey,
      r.at.toISOString(),
      r.recoveryAfter.toISOString(),
      JSON.stringify(r.context),
    ],
  );
  return Number(row!.id);
}

export interface RefundRow {
  id: number;
  orgId: number;
  paymentId: number;
  amountMinor: number;
  currency: string;
  reason: string;
  status: 'pending' | 'succeeded' | 'failed';
  uniqueTransactionId: string;
  actor: string | null;
  gatewayName: string;
  gatewayKey: string;
  gatewayRef: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  gatewayState: 'sending' | 'in_doubt' | null;
  sentAt: Date;
  recoveryAttempts: number;
  context: unknown;
  createdAt: Date;
  resolvedAt: Date | null;
}

interface RawRefund {
  id: string;
  org_id: string;
  payment_id: string;
  amount_minor: string;
  currency: string;
  reason: string;
  status: RefundRow['status'];
  unique_transaction_id: string;
  actor: string | null;
  gateway_name: string;
  gateway_key: string;
  gateway_ref: string | null;
  error_code: string | null;
  error_message: string | null;
  gateway_state: RefundRow['gatewayState'];
  gateway_sent_at: Date | string | null;
  recovery_attempts: number;
  pending_context: unknown;
  created_at: Date | string;
  resolved_at: Date | string | null;
}

const REFUND_COLS = `id, org_id, payment_id, amount_minor, currency, reason, status, unique_transaction_id, actor,
  gateway_name, gateway_key, gateway_ref, error_code, error_message, gateway_state, gateway_sent_at,
  recovery_attempts, pending_context, created_at, resolved_at`;

const toRefund = (r: RawRefund): RefundRow => ({
  id: Number(r.id),
  orgId: Number(r.org_id),
  paymentId: Number(r.payment_id),
  amountMinor: Number(r.amount_minor),
  currency: r.currency,
  reason: r.reason,
  status: r.status,
  uniqueTransactionId: r.unique_transaction_id,
  actor: r.actor,
  gatewayName: r.gateway_name,
  gatewayKey: r.gateway_key,
  gatewayRef: r.gateway_ref,
  errorCode: r.error_code,
  errorMessage: r.error_message,
  gatewayState: r.gateway_state,
  sentAt: new Date(r.gateway_sent_at ?? r.created_at),
  recoveryAttempts: Number(r.recovery_attempts),
  context: r.pending_context,
  createdAt: new Date(r.created_at),
  resolvedAt: r.resolved_at === null ? null : new Date(r.resolved_at),
});

/** The refund made under a uniqueTransactionId of the organisation, if any. */
export async function findRefundByKey(sql: Sql, orgId: number, key: string): Promise<RefundRow | null> {
  const [row] = await sql.query<RawRefund>(
    `SELECT ${REFUND_COLS} FROM refunds WHERE org_id = $1 AND unique_transaction_id = $2`,
    [orgId, key],
  );
  return row ? toRefund(row) : null;
}

/** Every refund of a payment, oldest first. */
export async function listRefunds(sql: Sql, paymentId: number): Promise<RefundRow[]> {
  const rows = await sql.query<RawRefund>(
    `SELECT ${REFUND_COLS} FROM refunds WHERE payment_id = $1 ORDER BY id`,
    [paymentId],
  );
  return rows.map(toRefund);
}

/**
 * Record the gateway's outcome of a pending refund (false: it was no longer pending, someone
 * recorded or released it first).
 */
export async function recordRefundOutcome(
  tx: Sql,
  id: number,
  o: {
    status: 'succeeded' | 'failed';
    gatewayRef: string | null;
    errorCode: string | null;
    errorMessage: string | null;
    at: Date;
  },
): Promise<boolean> {
  const rows = await tx.query(
    `UPDATE refunds SET status = $2, gateway_ref = $3, error_code = $4, error_message = $5, resolved_at = $6,
       gateway_state = NULL, recovery_after = NULL, pending_context = NULL
     WHERE id = $1 AND status = 'pending' RETURNING id`,
    [id, o.status, o.gatewayRef, o.errorCode, o.errorMessage, o.at.toISOString()],
  );
  return rows.length > 0;
}

/**
 * Add a succeeded refund to its payment (locked by `lockPaymentForRefund`): `Refunded` once all of
 * it is returned, else `PartiallyRefunded`. The table's CHECK forbids refunding more than charged.
 */
export async function applyRefund(
  tx: Sql,
  paymentId: number,
  amountMinor: number,
  at: Date,
): Promise<{ status: PaymentStatus; refundedMinor: number; amountMinor: number } | null> {
  const [row] = await tx.query<{ status: PaymentStatus; refunded_minor: string; amount_minor: string }>(
    `UPDATE payments SET refunded_minor = refunded_minor + $2, refunded_at = $3,
       status = CASE WHEN refunded_minor + $2 = amount_minor THEN 'Refunded' ELSE 'PartiallyRefunded' END
     WHERE id = $1 AND status IN ('Success', 'PartiallyRefunded')
     RETURNING status, refunded_minor, amount_minor`,
    [paymentId, amountMinor, at.toISOString()],
  );
  return row
    ? { status: row.status, refundedMinor: Number(row.refunded_minor), amountMinor: Number(row.amount_minor) }
    : null;
}

/** Forget a pending refund whose request certainly never reached the gateway (false: no longer pending). */
export async function deletePendingRefund(tx: Sql, id: number): Promise<boolean> {
  const rows = await tx.query(`DELETE FROM refunds WHERE id = $1 AND status = 'pending' RETURNING id`, [id]);
  return rows.length > 0;
}

/** The refund's gateway call ended without an outcome: recovery asks the gateway after `recoveryAfter`. */
export async function markRefundInDoubt(
  sql: Sql,
  id: number,
  recoveryAfter: Date,
  note: string,
): Promise<void> {
  await sql.query(
    `UPDATE refunds SET gateway_state = 'in_doubt', recovery_after = $2, recovery_note = $3
     WHERE id = $1 AND status = 'pending'`,
    [id, recoveryAfter.toISOString(), note],
  );
}

/**
 * Lease up to `limit` pending refunds whose time has come (in doubt, or claimed by a request that
 * never finished), as `leasePendingPayments` does for payments (FOR UPDATE SKIP LOCKED).
 */
export async function leasePendingRefunds(
  sql: Sql,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<(RefundRow & { orgGatewayRev: number })[]> {
  const rows = await sql.query<RawRefund & { gateway_rev: number | null }>(
    `UPDATE refunds r SET recovery_after = $2, recovery_attempts = r.recovery_attempts + 1
     FROM (SELECT id FROM refunds WHERE status = 'pending' AND recovery_after <= $1
           ORDER BY recovery_after, id LIMIT $3 FOR UPDATE SKIP LOCKED) due
     WHERE r.id = due.id
     RETURNING ${REFUND_COLS.split(',')
       .map((c) => `r.${c.trim()}`)
       .join(', ')}, (SELECT gateway_rev FROM orgs o WHERE o.id = r.org_id) AS gateway_rev`,
    [now.toISOString(), leaseUntil.toISOString(), limit],
  );
  return rows.map((r) => ({
    ...toRefund(r),
    orgGatewayRev: r.gateway_rev == null ? -1 : Number(r.gateway_rev),
  }));
}

/** Recovery could not tell yet: ask again after `retryAt`. */
export async function postponeRefundRecovery(
  sql: Sql,
  id: number,
  retryAt: Date,
  note: string,
): Promise<void> {
  await sql.query(
    `UPDATE refunds SET recovery_after = $2, recovery_note = $3, gateway_state = 'in_doubt'
     WHERE id = $1 AND status = 'pending'`,
    [id, retryAt.toISOString(), note],
  );
}

/** Whether a refund of this payment is pending (claimed, outcome not recorded). */
export async function hasPendingRefund(sql: Sql, paymentId: number): Promise<boolean> {
  const rows = await sql.query(`SELECT 1 FROM refunds WHERE payment_id = $1 AND status = 'pending' LIMIT 1`, [
    paymentId,
  ]);
  return rows.length > 0;
}

/** How many refunds are pending (a gauge for /metrics). */
export async function countPendingRefunds(sql: Sql): Promise<number> {
  const [row] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM refunds WHERE status = 'pending'`,
  );
  return Number(row?.n ?? 0);
}
