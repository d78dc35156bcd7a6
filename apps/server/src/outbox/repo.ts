import { randomUUID } from 'node:crypto';
import type { Sql } from '../db/database.ts';

export type EventType = 'payment' | 'schedule' | 'void';

/** Channel notified (on commit) when deliveries become due. */
export const WEBHOOK_CHANNEL = 'kupah_webhooks';

/**
 * Write an event in the caller's transaction (the transactional outbox), with one delivery per
 * enabled endpoint of the org for this kind, and notify the dispatchers, all in one statement: the
 * event exists exactly when the payment, schedule or void that caused it was committed, and
 * PostgreSQL delivers the notification only on commit.
 */
export async function insertEvent(
  tx: Sql,
  orgId: number,
  type: EventType,
  payload: unknown,
  at: Date,
): Promise<string> {
  const eventId = `msg_${randomUUID().replaceAll('-', '')}`;
  await tx.query(
    `WITH e AS (
       INSERT INTO outbox_events (org_id, event_type, event_id, payload, receipt_num) VALUES ($1, $2, $3, $4, $6) RETURNING id
     ), d AS (
       INSERT INTO webhook_deliveries (org_id, event_id, endpoint_id, status, next_attempt_at, created_at)
       SELECT $1, e.id, w.id, 'pending', $5, $5 FROM e, webhook_endpoints w
       WHERE w.org_id = $1 AND w.kind = $2 AND w.disabled_at IS NULL
       RETURNING id
     )
     SELECT CASE WHEN EXISTS (SELECT 1 FROM d) THEN pg_notify('${WEBHOOK_CHANNEL}', '') END AS notified`,
    [orgId, type, eventId, JSON.stringify(payload), at.toISOString(), receiptOf(payload)],
  );
  return eventId;
}

/** The receipt number a webhook body is about: its payment, or the first payment of a schedule. */
function receiptOf(payload: unknown): string | null {
  const p = payload as { paymentNumber?: unknown; firstPayment?: { paymentNumber?: unknown } };
  const receipt = p.paymentNumber ?? p.firstPayment?.paymentNumber;
  return typeof receipt === 'string' ? receipt : null;
}

export async function listEvents(
  sql: Sql,
  orgId: number,
  type?: EventType,
): Promise<{ eventId: string; type: EventType; payload: unknown }[]> {
  const rows = await sql.query<{ event_id: string; event_type: EventType; payload: string }>(
    `SELECT event_id, event_type, payload FROM outbox_events WHERE org_id = $1 AND ($2::text IS NULL OR event_type = $2)
     ORDER BY id`,
    [orgId, type ?? null],
  );
  return rows.map((r) => ({ eventId: r.event_id, type: r.event_type, payload: JSON.parse(r.payload) }));
}
