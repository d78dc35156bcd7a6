import type { Currency, Frequency, PaymentMethodId, ScheduleHandlingMode } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';

export type ScheduleStatus = 'active' | 'failed' | 'completed' | 'cancelled' | 'paused';

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
       reasons, special_days, anniversary_rule, source_id, api_key_id, unique_transaction_id, note, device, is_anonymous)
     VALUES ($1, nextval('schedule_seq'), $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, $15,
       $16::jsonb, $17::jsonb, $18, $19, $20, $21, $22, $23::jsonb, $24)
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
    ],
  );
  return { id: Number(row!.id), scheduleNum: Number(row!.schedule_num) };
}

export async function setScheduleStatus(tx: Sql, id: number, status: ScheduleStatus): Promise<void> {
  await tx.query('UPDATE schedules SET status = $2, updated_at = now() WHERE id = $1', [id, status]);
}

export async function countSchedules(sql: Sql, orgId: number): Promise<number> {
  const [row] = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM schedules WHERE org_id = $1', [
    orgId,
  ]);
  return Number(row!.n);
}

export async function setScheduleInstrumentToken(tx: Sql, id: number, token: string): Promise<void> {
  await tx.query(
    `UPDATE schedules SET instrument = jsonb_set(instrument, '{token}', to_jsonb($2::text)), updated_at = now() WHERE id = $1`,
    [id, token],
  );
}
