import type { Currency, PaymentMethodId } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';

export type PaymentStatus = 'Success' | 'Declined' | 'Error' | 'Voided';

export interface NewPayment {
  orgId: number;
  status: Exclude<PaymentStatus, 'Voided'>;
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
  gatewayRef: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  isAnonymous: boolean;
  device: unknown;
  reasons: { reasonId: number; amountMinor: number }[];
}

/** Insert a payment and its reason split; returns its id and new receipt number. */
export async function insertPayment(tx: Sql, p: NewPayment): Promise<{ id: number; receiptNum: string }> {
  const [row] = await tx.query<{ id: string; receipt_num: string }>(
    `INSERT INTO payments (org_id, receipt_num, status, amount_minor, currency, method, payment_date, processed_at,
       donor_id, donor_created, campaign_id, collector_id, schedule_id, instalment_seq, source_id, api_key_id,
       unique_transaction_id, note, brand, last4, expiry, card_holder_name, token, gateway_name, gateway_ref,
       error_code, error_message, is_anonymous, device)
     VALUES ($1, 'R' || nextval('receipt_seq'), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17,
       $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28::jsonb)
     RETURNING id, receipt_num`,
    [
      p.orgId,
      p.status,
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
      p.gatewayRef,
      p.errorCode,
      p.errorMessage,
      p.isAnonymous,
      p.device === null ? null : JSON.stringify(p.device),
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
  gatewayName: string;
  gatewayRef: string | null;
  voidedAt: Date | null;
}

interface PaymentForVoidRow {
  id: string;
  receipt_num: string;
  status: PaymentStatus;
  gateway_name: string;
  gateway_ref: string | null;
  voided_at: Date | null;
}

const toPaymentForVoid = (row: PaymentForVoidRow): PaymentForVoid => ({
  id: Number(row.id),
  receiptNum: row.receipt_num,
  status: row.status,
  gatewayName: row.gateway_name,
  gatewayRef: row.gateway_ref,
  voidedAt: row.voided_at,
});

const VOID_COLS = 'id, receipt_num, status, gateway_name, gateway_ref, voided_at';

export async function lockPaymentByReceipt(
  tx: Sql,
  orgId: number,
  receiptNum: string,
): Promise<PaymentForVoid | null> {
  const [row] = await tx.query<PaymentForVoidRow>(
    `SELECT ${VOID_COLS} FROM payments WHERE org_id = $1 AND upper(receipt_num) = upper($2) FOR UPDATE`,
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
