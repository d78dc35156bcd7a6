import { randomUUID } from 'node:crypto';
import type { Sql } from '../db/database.ts';

export type EventType = 'payment' | 'schedule' | 'void';

/**
 * Write an event in the caller's transaction (the transactional outbox): it exists exactly when
 * the payment, schedule or void that caused it was committed.
 */
export async function insertEvent(
  tx: Sql,
  orgId: number,
  type: EventType,
  payload: unknown,
): Promise<string> {
  const eventId = `msg_${randomUUID().replaceAll('-', '')}`;
  await tx.query(
    'INSERT INTO outbox_events (org_id, event_type, event_id, payload) VALUES ($1, $2, $3, $4::jsonb)',
    [orgId, type, eventId, JSON.stringify(payload)],
  );
  return eventId;
}

export async function listEvents(
  sql: Sql,
  orgId: number,
  type?: EventType,
): Promise<{ eventId: string; type: EventType; payload: unknown }[]> {
  const rows = await sql.query<{ event_id: string; event_type: EventType; payload: unknown }>(
    `SELECT event_id, event_type, payload FROM outbox_events WHERE org_id = $1 AND ($2::text IS NULL OR event_type = $2)
     ORDER BY id`,
    [orgId, type ?? null],
  );
  return rows.map((r) => ({ eventId: r.event_id, type: r.event_type, payload: r.payload }));
}
