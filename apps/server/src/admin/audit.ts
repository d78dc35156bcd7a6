/**
 * The admin audit log (table admin_audit): who did what to which organisation, from where, with
 * what outcome. Never holds a credential, a secret or card data: arguments are summarised with
 * every secret-looking field replaced, and the actor is named by a fingerprint of its token.
 */
import { createHash } from 'node:crypto';
import type { Sql } from '../db/database.ts';

export type AuditOutcome = 'ok' | 'failed' | 'refused';

export interface AuditEntry {
  at: Date;
  /** `admin token sha256:…` (12 hex digits of the token's SHA-256), or `unauthenticated`. */
  actor: string;
  method: string;
  /** The route pattern (`/admin/orgs/:org/settings`). */
  route: string;
  path: string;
  orgGuid: string | null;
  /** The route's ids other than the organisation (`{ device: '…' }`). */
  target: Record<string, string>;
  /** The request's arguments with secrets replaced (null: none). */
  summary: unknown;
  remoteAddr: string | null;
  userAgent: string | null;
  status: number;
  outcome: AuditOutcome;
}

/** The identity of the admin token in the audit log: never the token, a short fingerprint of it. */
export function tokenActor(token: string): string {
  return `admin token sha256:${createHash('sha256').update(token).digest('hex').slice(0, 12)}`;
}

/** Field names whose values are secrets or card data: never written, even summarised. */
const SECRET_FIELD = /key|secret|token|password|passphrase|card|ccnum|cvv|account|pin|sourceguid|credential/i;
const MAX_STRING = 200;
const MAX_DEPTH = 4;
const MAX_ITEMS = 20;

/** The arguments of an admin request, fit for the audit log: secret fields replaced, sizes capped. */
export function summarise(value: unknown, depth = 0): unknown {
  if (value === null || typeof value === 'boolean' || typeof value === 'number') return value;
  if (typeof value === 'string') {
    // A run of 12 or more digits could be a card or account number typed in the wrong field.
    const s = value.replace(/\d(?:[ -]?\d){11,}/g, '[digits]');
    return s.length > MAX_STRING ? `${s.slice(0, MAX_STRING)}… (${s.length} chars)` : s;
  }
  if (depth >= MAX_DEPTH) return '[…]';
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map((v) => summarise(v, depth + 1));
    return value.length > MAX_ITEMS ? [...items, `… (${value.length} items)`] : items;
  }
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>).slice(0, 50)) {
      out[k] = SECRET_FIELD.test(k) ? (v === null ? null : '[redacted]') : summarise(v, depth + 1);
    }
    return out;
  }
  return String(value);
}

export async function insertAudit(sql: Sql, e: AuditEntry): Promise<void> {
  await sql.query(
    `INSERT INTO admin_audit (at, actor, method, route, path, org_guid, target, summary, remote_addr,
       user_agent, status, outcome)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      e.at,
      e.actor,
      e.method,
      e.route,
      e.path.slice(0, 2000),
      e.orgGuid?.slice(0, 256) ?? null,
      JSON.stringify(e.target),
      e.summary === null || e.summary === undefined ? null : JSON.stringify(e.summary),
      e.remoteAddr,
      e.userAgent?.slice(0, 512) ?? null,
      e.status,
      e.outcome,
    ],
  );
}

export interface AuditQuery {
  org?: string | undefined;
  since?: string | undefined;
  limit: number;
}

/** An entry as listed: its id, and the time as ISO text. */
export type AuditView = Omit<AuditEntry, 'at'> & { id: number; at: string };

/** A row of admin_audit as read back (columns AUDIT_COLUMNS). */
export interface AuditRow {
  id: string | number;
  at: Date | string;
  actor: string;
  method: string;
  route: string;
  path: string;
  org_guid: string | null;
  target: Record<string, string> | string;
  summary: unknown;
  remote_addr: string | null;
  user_agent: string | null;
  status: number;
  outcome: AuditOutcome;
}

export const AUDIT_COLUMNS =
  'id, at, actor, method, route, path, org_guid, target, summary, remote_addr, user_agent, status, outcome';

const parseJson = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);

/** An audit entry as the admin API and the console show it. */
export function auditViewOf(r: AuditRow): AuditView {
  return {
    id: Number(r.id),
    at: new Date(r.at).toISOString(),
    actor: r.actor,
    method: r.method,
    route: r.route,
    path: r.path,
    orgGuid: r.org_guid,
    target: parseJson(r.target) as Record<string, string>,
    summary: parseJson(r.summary) ?? null,
    remoteAddr: r.remote_addr,
    userAgent: r.user_agent,
    status: Number(r.status),
    outcome: r.outcome,
  };
}

/** Newest first. */
export async function listAudit(sql: Sql, q: AuditQuery): Promise<{ entries: AuditView[] }> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (q.org !== undefined) {
    params.push(q.org.toLowerCase());
    where.push(`lower(org_guid) = $${params.length}`);
  }
  if (q.since !== undefined) {
    params.push(new Date(q.since));
    where.push(`at >= $${params.length}`);
  }
  params.push(q.limit);
  const rows = await sql.query<AuditRow>(
    `SELECT ${AUDIT_COLUMNS}
     FROM admin_audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
     ORDER BY at DESC, id DESC LIMIT $${params.length}`,
    params,
  );
  return { entries: rows.map(auditViewOf) };
}
