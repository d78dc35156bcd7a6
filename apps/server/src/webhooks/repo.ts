import { randomBytes } from 'node:crypto';
import type { Sql } from '../db/database.ts';
import type { EventType } from '../outbox/repo.ts';
import type { KeyEncryptionKey } from '../secrets/key-encryption.ts';

/** A Standard Webhooks secret: `whsec_` + base64 of 24 random bytes. */
export const generateWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/**
 * Where an endpoint's signing secrets are stored: the AAD their sealed values are bound to (the
 * current and the previous secret share it: rotating moves one column to the other).
 */
export const webhookSecretAad = (orgId: number, kind: string): string => `webhook_endpoints:${orgId}:${kind}`;

/** A stored secret is sealed (`kek1.…`); rows of earlier versions hold it in clear (`whsec_…`). */
export const isClearWebhookSecret = (stored: string): boolean => stored.startsWith('whsec_');

/** The secret of a stored value: opened when sealed, as is when an earlier version stored it in clear. */
export function openWebhookSecret(
  kek: KeyEncryptionKey,
  orgId: number,
  kind: string,
  stored: string,
): string {
  return isClearWebhookSecret(stored) ? stored : kek.open(stored, webhookSecretAad(orgId, kind));
}

export interface ClaimedDelivery {
  id: number;
  orgId: number;
  attempt: number;
  webhookId: string;
  type: EventType;
  body: string;
  eventCreatedAt: Date;
  endpointId: number;
  /** The endpoint's kind (its secrets are bound to it). */
  endpointKind: string;
  url: string;
  /** The signing secrets as stored (sealed): open them with `openWebhookSecret`. */
  secrets: string[];
}

/**
 * Claim due deliveries in one statement: rows locked by another dispatcher are skipped, and each
 * claimed row is leased (its next attempt moved to `leaseUntil`) so no other instance sends the
 * same attempt; if this process dies mid-send, the lease runs out and the delivery is retried.
 */
export async function claimDue(
  sql: Sql,
  now: Date,
  leaseUntil: Date,
  limit: number,
): Promise<ClaimedDelivery[]> {
  const rows = await sql.query<{
    id: string;
    org_id: string;
    attempts: number;
    event_id: string;
    event_type: EventType;
    payload: string;
    event_created_at: Date;
    endpoint_id: string;
    kind: string;
    url: string;
    secret: string;
    previous_secret: string | null;
    previous_expires_at: Date | null;
  }>(
    `WITH due AS (
       SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= $1 AND w.disabled_at IS NULL
       ORDER BY d.next_attempt_at LIMIT $3
       FOR UPDATE OF d SKIP LOCKED
     )
     UPDATE webhook_deliveries d SET attempts = d.attempts + 1, next_attempt_at = $2, updated_at = now()
     FROM due, outbox_events e, webhook_endpoints w
     WHERE d.id = due.id AND e.id = d.event_id AND w.id = d.endpoint_id
     RETURNING d.id, d.org_id, d.attempts, e.event_id, e.event_type, e.payload, e.created_at AS event_created_at,
       w.id AS endpoint_id, w.kind, w.url, w.secret, w.previous_secret, w.previous_expires_at`,
    [now.toISOString(), leaseUntil.toISOString(), limit],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    orgId: Number(r.org_id),
    attempt: Number(r.attempts),
    webhookId: r.event_id,
    type: r.event_type,
    body: r.payload,
    eventCreatedAt: new Date(r.event_created_at),
    endpointId: Number(r.endpoint_id),
    endpointKind: r.kind,
    url: r.url,
    secrets:
      r.previous_secret && r.previous_expires_at && new Date(r.previous_expires_at) > now
        ? [r.secret, r.previous_secret]
        : [r.secret],
  }));
}

export interface AttemptRecord {
  deliveryId: number;
  attempt: number;
  startedAt: Date;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
}

export async function recordAttempt(sql: Sql, a: AttemptRecord): Promise<void> {
  await sql.query(
    `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, error)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [a.deliveryId, a.attempt, a.startedAt.toISOString(), a.statusCode, a.latencyMs, a.error],
  );
}

/**
 * Success, in one statement: the attempt is recorded, the delivery is delivered (guarded by the
 * attempt number claimed), and the endpoint's failure streak ends. The endpoint row is written
 * only when there is a streak to end, so concurrent deliveries do not queue on its lock.
 */
export async function markDelivered(
  sql: Sql,
  d: ClaimedDelivery,
  statusCode: number,
  at: Date,
  attempt: Omit<AttemptRecord, 'deliveryId' | 'attempt' | 'statusCode'>,
): Promise<void> {
  await sql.query(
    `WITH a AS (
       INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, error)
       VALUES ($1, $2, $5, $4, $6, NULL)
     ), upd AS (
       UPDATE webhook_deliveries SET status = 'delivered', delivered_at = $3, last_status_code = $4, last_error = NULL,
         updated_at = now()
       WHERE id = $1 AND attempts = $2 AND status = 'pending' RETURNING endpoint_id
     )
     UPDATE webhook_endpoints SET failing_since = NULL
     WHERE id IN (SELECT endpoint_id FROM upd) AND failing_since IS NOT NULL`,
    [d.id, d.attempt, at.toISOString(), statusCode, attempt.startedAt.toISOString(), attempt.latencyMs],
  );
}

/** Failure: schedule the next attempt, or dead-letter when `nextAt` is null. */
export async function markFailed(
  sql: Sql,
  d: ClaimedDelivery,
  statusCode: number | null,
  error: string | null,
  nextAt: Date | null,
): Promise<void> {
  await sql.query(
    `UPDATE webhook_deliveries SET status = CASE WHEN $3::timestamptz IS NULL THEN 'dead' ELSE 'pending' END,
       next_attempt_at = COALESCE($3::timestamptz, next_attempt_at), last_status_code = $4, last_error = $5,
       updated_at = now()
     WHERE id = $1 AND attempts = $2 AND status = 'pending'`,
    [d.id, d.attempt, nextAt?.toISOString() ?? null, statusCode, error],
  );
}

/** Note an endpoint failure; returns when it has been failing since (the first failure in a row). */
export async function noteEndpointFailure(sql: Sql, endpointId: number, at: Date): Promise<Date> {
  const [row] = await sql.query<{ failing_since: Date }>(
    `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2) WHERE id = $1 RETURNING failing_since`,
    [endpointId, at.toISOString()],
  );
  return new Date(row!.failing_since);
}

/** Disable an endpoint (410 Gone, or failing too long) and record an admin event; once. */
export async function disableEndpoint(
  sql: Sql,
  endpointId: number,
  reason: string,
  at: Date,
): Promise<boolean> {
  const rows = await sql.query<{ org_id: string; kind: string; url: string }>(
    `UPDATE webhook_endpoints SET disabled_at = $2, disabled_reason = $3 WHERE id = $1 AND disabled_at IS NULL
     RETURNING org_id, kind, url`,
    [endpointId, at.toISOString(), reason],
  );
  const row = rows[0];
  if (!row) return false;
  await sql.query(
    `INSERT INTO admin_events (org_id, kind, detail) VALUES ($1, 'webhook_endpoint_disabled', $2::jsonb)`,
    [row.org_id, JSON.stringify({ kind: row.kind, url: row.url, reason })],
  );
  return true;
}

export async function countPending(sql: Sql): Promise<number> {
  const [row] = await sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'pending'`,
  );
  return Number(row!.n);
}

// --- operations ---------------------------------------------------------------------------------

export interface DeliveryRow {
  id: number;
  webhookId: string;
  type: EventType;
  endpoint: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  deliveredAt: string | null;
}

export async function listDeliveries(
  sql: Sql,
  orgId: number,
  f: {
    id?: number | undefined;
    status?: string | undefined;
    kind?: string | undefined;
    since?: string | undefined;
    limit: number;
  },
): Promise<DeliveryRow[]> {
  const rows = await sql.query<{
    id: string;
    event_id: string;
    event_type: EventType;
    url: string;
    status: string;
    attempts: number;
    next_attempt_at: Date;
    last_status_code: number | null;
    last_error: string | null;
    created_at: Date;
    delivered_at: Date | null;
  }>(
    `SELECT d.id, e.event_id, e.event_type, w.url, d.status, d.attempts, d.next_attempt_at, d.last_status_code,
       d.last_error, d.created_at, d.delivered_at
     FROM webhook_deliveries d JOIN outbox_events e ON e.id = d.event_id JOIN webhook_endpoints w ON w.id = d.endpoint_id
     WHERE d.org_id = $1 AND ($2::text IS NULL OR d.status = $2) AND ($3::text IS NULL OR w.kind = $3)
       AND ($4::timestamptz IS NULL OR d.created_at >= $4) AND ($6::bigint IS NULL OR d.id = $6)
     ORDER BY d.id DESC LIMIT $5`,
    [orgId, f.status ?? null, f.kind ?? null, f.since ?? null, f.limit, f.id ?? null],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    webhookId: r.event_id,
    type: r.event_type,
    endpoint: r.url,
    status: r.status,
    attempts: Number(r.attempts),
    nextAttemptAt: r.status === 'pending' ? new Date(r.next_attempt_at).toISOString() : null,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: new Date(r.created_at).toISOString(),
    deliveredAt: r.delivered_at ? new Date(r.delivered_at).toISOString() : null,
  }));
}

export async function listAttempts(sql: Sql, orgId: number, deliveryId: number) {
  const rows = await sql.query<{
    attempt: number;
    started_at: Date;
    status_code: number | null;
    latency_ms: number;
    error: string | null;
  }>(
    `SELECT a.attempt, a.started_at, a.status_code, a.latency_ms, a.error FROM webhook_attempts a
     JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.org_id = $1 AND d.id = $2 ORDER BY a.id`,
    [orgId, deliveryId],
  );
  return rows.map((r) => ({
    attempt: r.attempt,
    startedAt: new Date(r.started_at).toISOString(),
    statusCode: r.status_code,
    latencyMs: r.latency_ms,
    error: r.error,
  }));
}

/** Replay: due now again, with the same webhook-id and a fresh schedule. */
export async function replayDeliveries(
  sql: Sql,
  orgId: number,
  target: { deliveryId: number } | { failedSince: string },
  now: Date,
): Promise<number> {
  const byId = 'deliveryId' in target;
  const rows = await sql.query(
    `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, next_attempt_at = $2, updated_at = now()
     WHERE org_id = $1 AND ${byId ? 'id = $3' : "status = 'dead' AND created_at >= $3"}
     RETURNING id`,
    [orgId, now.toISOString(), byId ? target.deliveryId : target.failedSince],
  );
  if (rows.length > 0) await sql.query(`SELECT pg_notify('kupah_webhooks', '')`);
  return rows.length;
}

/**
 * New signing secret (sealed under `kek`); the old one keeps signing alongside for `overlapMs`.
 * Returns the new secret in clear (shown once), or null when the endpoint does not exist.
 */
export async function rotateSecret(
  sql: Sql,
  kek: KeyEncryptionKey,
  orgId: number,
  kind: EventType,
  previousUntil: Date,
): Promise<string | null> {
  const secret = generateWebhookSecret();
  const rows = await sql.query(
    `UPDATE webhook_endpoints SET previous_secret = secret, previous_expires_at = $4, secret = $3, updated_at = now()
     WHERE org_id = $1 AND kind = $2 RETURNING id`,
    [orgId, kind, kek.seal(secret, webhookSecretAad(orgId, kind)), previousUntil.toISOString()],
  );
  return rows.length > 0 ? secret : null;
}

/**
 * Create or change an endpoint. A new endpoint, or one whose URL changes, gets a new signing
 * secret (sealed; the old one, if any, stops signing at once: it was the old receiver's), which is
 * returned in clear to be shown once. The same URL again keeps the secret (null: nothing to show).
 */
export async function saveWebhookEndpoint(
  sql: Sql,
  kek: KeyEncryptionKey,
  orgId: number,
  kind: string,
  url: string,
): Promise<{ url: string; secret: string | null }> {
  const [held] = await sql.query<{ url: string }>(
    'SELECT url FROM webhook_endpoints WHERE org_id = $1 AND kind = $2 FOR UPDATE',
    [orgId, kind],
  );
  if (held && held.url === url) {
    await sql.query(
      `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL,
         updated_at = now() WHERE org_id = $1 AND kind = $2`,
      [orgId, kind],
    );
    return { url, secret: null };
  }
  const secret = generateWebhookSecret();
  await sql.query(
    `INSERT INTO webhook_endpoints (org_id, kind, url, secret) VALUES ($1, $2, $3, $4)
     ON CONFLICT (org_id, kind) DO UPDATE SET url = EXCLUDED.url, secret = EXCLUDED.secret,
       previous_secret = NULL, previous_expires_at = NULL, disabled_at = NULL, disabled_reason = NULL,
       failing_since = NULL, updated_at = now()`,
    [orgId, kind, url, kek.seal(secret, webhookSecretAad(orgId, kind))],
  );
  return { url, secret };
}

/** Every endpoint's stored secrets, locked until commit (sealing, re-sealing under a new KEK). */
export async function lockWebhookSecrets(
  sql: Sql,
): Promise<{ id: number; orgId: number; kind: string; secret: string; previousSecret: string | null }[]> {
  const rows = await sql.query<{
    id: string | number;
    org_id: string | number;
    kind: string;
    secret: string;
    previous_secret: string | null;
  }>('SELECT id, org_id, kind, secret, previous_secret FROM webhook_endpoints ORDER BY id FOR UPDATE');
  return rows.map((r) => ({
    id: Number(r.id),
    orgId: Number(r.org_id),
    kind: r.kind,
    secret: r.secret,
    previousSecret: r.previous_secret,
  }));
}

export async function updateWebhookSecrets(
  sql: Sql,
  id: number,
  secret: string,
  previousSecret: string | null,
): Promise<void> {
  await sql.query('UPDATE webhook_endpoints SET secret = $2, previous_secret = $3 WHERE id = $1', [
    id,
    secret,
    previousSecret,
  ]);
}

export async function listAdminEvents(sql: Sql, orgId: number) {
  const rows = await sql.query<{ kind: string; detail: unknown; created_at: Date }>(
    'SELECT kind, detail, created_at FROM admin_events WHERE org_id = $1 ORDER BY id DESC LIMIT 200',
    [orgId],
  );
  return rows.map((r) => ({ kind: r.kind, detail: r.detail, at: new Date(r.created_at).toISOString() }));
}
