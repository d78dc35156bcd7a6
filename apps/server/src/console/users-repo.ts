/**
 * SQL of console users, their sessions, one-time links, the sign-in failure counters and the
 * console's view of the audit log. No rules here: console/users-service.ts decides.
 */
import { AUDIT_COLUMNS, type AuditRow, type AuditView, auditViewOf } from '../admin/audit.ts';
import type { Sql } from '../db/database.ts';
import type { ConsoleRole } from './env.ts';

export interface UserRow {
  userId: number;
  orgId: number;
  orgGuid: string;
  orgName: string;
  email: string;
  name: string | null;
  role: ConsoleRole;
  passwordHash: string | null;
  disabledAt: Date | null;
  lastSignInAt: Date | null;
  createdAt: Date;
}

const USER_COLUMNS = `u.id AS user_id, u.org_id, o.guid AS org_guid, o.name AS org_name, u.email, u.name,
  u.role, u.password_hash, u.disabled_at, u.last_sign_in_at, u.created_at`;

interface RawUser {
  user_id: string | number;
  org_id: string | number;
  org_guid: string;
  org_name: string;
  email: string;
  name: string | null;
  role: ConsoleRole;
  password_hash: string | null;
  disabled_at: Date | string | null;
  last_sign_in_at: Date | string | null;
  created_at: Date | string;
}

const date = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

function toUser(r: RawUser): UserRow {
  return {
    userId: Number(r.user_id),
    orgId: Number(r.org_id),
    orgGuid: String(r.org_guid),
    orgName: r.org_name,
    email: r.email,
    name: r.name,
    role: r.role,
    passwordHash: r.password_hash,
    disabledAt: date(r.disabled_at),
    lastSignInAt: date(r.last_sign_in_at),
    createdAt: new Date(r.created_at),
  };
}

/** `email` already normalised (users-service.ts `normaliseEmail`): compared as it is (the index is on lower(email)). */
export async function findUserByEmail(sql: Sql, email: string): Promise<UserRow | null> {
  const [r] = await sql.query<RawUser>(
    `SELECT ${USER_COLUMNS} FROM console_users u JOIN orgs o ON o.id = u.org_id WHERE lower(u.email) = $1`,
    [email],
  );
  return r ? toUser(r) : null;
}

export async function findUser(sql: Sql, orgId: number, userId: number): Promise<UserRow | null> {
  const [r] = await sql.query<RawUser>(
    `SELECT ${USER_COLUMNS} FROM console_users u JOIN orgs o ON o.id = u.org_id WHERE u.org_id = $1 AND u.id = $2`,
    [orgId, userId],
  );
  return r ? toUser(r) : null;
}

export async function listUsers(sql: Sql, orgId: number): Promise<UserRow[]> {
  const rows = await sql.query<RawUser>(
    `SELECT ${USER_COLUMNS} FROM console_users u JOIN orgs o ON o.id = u.org_id WHERE u.org_id = $1 ORDER BY u.id`,
    [orgId],
  );
  return rows.map(toUser);
}

/** The new user's id, or null when the e-mail address is taken (in any organisation). */
export async function insertUser(
  sql: Sql,
  u: { orgId: number; email: string; name: string | null; role: ConsoleRole; passwordHash: string | null },
  now: Date,
): Promise<number | null> {
  const [r] = await sql.query<{ id: string | number }>(
    `INSERT INTO console_users (org_id, email, name, role, password_hash, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT (lower(email)) DO NOTHING
     RETURNING id`,
    [u.orgId, u.email, u.name, u.role, u.passwordHash, now],
  );
  return r ? Number(r.id) : null;
}

export async function updateUser(
  sql: Sql,
  userId: number,
  change: {
    role?: ConsoleRole | undefined;
    disabled?: boolean | undefined;
    name?: string | null | undefined;
  },
  now: Date,
): Promise<void> {
  await sql.query(
    `UPDATE console_users SET
       role = COALESCE($2, role),
       disabled_at = CASE WHEN $3::boolean IS NULL THEN disabled_at WHEN $3 THEN COALESCE(disabled_at, $4) ELSE NULL END,
       name = CASE WHEN $5::boolean THEN $6 ELSE name END,
       updated_at = $4
     WHERE id = $1`,
    [
      userId,
      change.role ?? null,
      change.disabled ?? null,
      now,
      change.name !== undefined,
      change.name ?? null,
    ],
  );
}

/**
 * Locks the organisation's owners' rows until the transaction ends: two owners demoting or
 * disabling each other at once are taken one after the other (the second sees the first's change).
 */
export async function lockOwners(sql: Sql, orgId: number): Promise<void> {
  await sql.query(
    `SELECT id FROM console_users WHERE org_id = $1 AND role = 'owner' ORDER BY id FOR UPDATE`,
    [orgId],
  );
}

/** Enabled owners who can sign in (a password set) of an organisation, other than `exceptUserId`. */
export async function countOtherOwners(sql: Sql, orgId: number, exceptUserId: number): Promise<number> {
  const [r] = await sql.query<{ n: string | number }>(
    `SELECT count(*) AS n FROM console_users
     WHERE org_id = $1 AND id <> $2 AND role = 'owner' AND disabled_at IS NULL AND password_hash IS NOT NULL`,
    [orgId, exceptUserId],
  );
  return Number(r!.n);
}

export async function setPasswordHash(sql: Sql, userId: number, hash: string, now: Date): Promise<void> {
  await sql.query('UPDATE console_users SET password_hash = $2, updated_at = $3 WHERE id = $1', [
    userId,
    hash,
    now,
  ]);
}

export async function markSignedIn(sql: Sql, userId: number, now: Date): Promise<void> {
  await sql.query('UPDATE console_users SET last_sign_in_at = $2 WHERE id = $1', [userId, now]);
}

// ---------------------------------------------------------------------------------------------
// Sessions

export interface SessionRow {
  sessionId: string;
  csrfToken: string;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  user: UserRow;
}

export async function insertSession(
  sql: Sql,
  s: {
    id: string;
    userId: number;
    csrfToken: string;
    now: Date;
    expiresAt: Date;
    ip: string | null;
    userAgent: string | null;
  },
): Promise<void> {
  await sql.query(
    `INSERT INTO console_sessions (id, user_id, csrf_token, created_at, last_seen_at, expires_at, ip, user_agent)
     VALUES ($1, $2, $3, $4, $4, $5, $6, $7)`,
    [s.id, s.userId, s.csrfToken, s.now, s.expiresAt, s.ip, s.userAgent?.slice(0, 512) ?? null],
  );
}

/** The session with its user and organisation, in one query. */
export async function loadSession(sql: Sql, id: string): Promise<SessionRow | null> {
  const [r] = await sql.query<
    RawUser & {
      session_id: string;
      csrf_token: string;
      s_created_at: Date | string;
      last_seen_at: Date | string;
      expires_at: Date | string;
    }
  >(
    `SELECT s.id AS session_id, s.csrf_token, s.created_at AS s_created_at, s.last_seen_at, s.expires_at,
       ${USER_COLUMNS}
     FROM console_sessions s
     JOIN console_users u ON u.id = s.user_id
     JOIN orgs o ON o.id = u.org_id
     WHERE s.id = $1`,
    [id],
  );
  if (!r) return null;
  return {
    sessionId: r.session_id,
    csrfToken: r.csrf_token,
    createdAt: new Date(r.s_created_at),
    lastSeenAt: new Date(r.last_seen_at),
    expiresAt: new Date(r.expires_at),
    user: toUser(r),
  };
}

export async function touchSession(sql: Sql, id: string, now: Date): Promise<void> {
  await sql.query('UPDATE console_sessions SET last_seen_at = $2 WHERE id = $1 AND last_seen_at < $2', [
    id,
    now,
  ]);
}

export async function deleteSession(sql: Sql, id: string): Promise<void> {
  await sql.query('DELETE FROM console_sessions WHERE id = $1', [id]);
}

/** Ends every session of the user but `keep` (null: all). Returns how many ended. */
export async function deleteUserSessions(sql: Sql, userId: number, keep: string | null): Promise<number> {
  const rows = await sql.query(
    'DELETE FROM console_sessions WHERE user_id = $1 AND ($2::text IS NULL OR id <> $2) RETURNING id',
    [userId, keep],
  );
  return rows.length;
}

export async function countUserSessions(sql: Sql, userId: number): Promise<number> {
  const [r] = await sql.query<{ n: string | number }>(
    'SELECT count(*) AS n FROM console_sessions WHERE user_id = $1',
    [userId],
  );
  return Number(r!.n);
}

/** Sessions past their absolute limit or idle too long: removed now and then. */
export async function purgeSessions(sql: Sql, now: Date, idleMs: number): Promise<number> {
  const rows = await sql.query(
    `DELETE FROM console_sessions
     WHERE expires_at <= $1 OR last_seen_at <= $1::timestamptz - make_interval(secs => $2::float8 / 1000)
     RETURNING id`,
    [now, idleMs],
  );
  return rows.length;
}

// ---------------------------------------------------------------------------------------------
// One-time links

export type LinkKind = 'invitation' | 'reset';

/** A new link; the user's earlier unused links of any kind stop working. */
export async function insertLink(
  sql: Sql,
  l: { id: string; userId: number; kind: LinkKind; now: Date; expiresAt: Date },
): Promise<void> {
  await sql.query('UPDATE console_links SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL', [
    l.userId,
    l.now,
  ]);
  await sql.query(
    `INSERT INTO console_links (id, user_id, kind, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
    [l.id, l.userId, l.kind, l.now, l.expiresAt],
  );
}

/** Every unused link of the user stops working (password changed, user disabled). */
export async function expireUserLinks(sql: Sql, userId: number, now: Date): Promise<void> {
  await sql.query('UPDATE console_links SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL', [
    userId,
    now,
  ]);
}

/** A link not used and not expired, with its user. */
export async function findLiveLink(
  sql: Sql,
  id: string,
  now: Date,
): Promise<{ kind: LinkKind; user: UserRow } | null> {
  const [r] = await sql.query<RawUser & { kind: LinkKind }>(
    `SELECT l.kind, ${USER_COLUMNS}
     FROM console_links l JOIN console_users u ON u.id = l.user_id JOIN orgs o ON o.id = u.org_id
     WHERE l.id = $1 AND l.used_at IS NULL AND l.expires_at > $2`,
    [id, now],
  );
  return r ? { kind: r.kind, user: toUser(r) } : null;
}

/** Marks a live link used; false when it was used or expired meanwhile (only one use wins). */
export async function useLink(sql: Sql, id: string, now: Date): Promise<boolean> {
  const rows = await sql.query(
    'UPDATE console_links SET used_at = $2 WHERE id = $1 AND used_at IS NULL AND expires_at > $2 RETURNING id',
    [id, now],
  );
  return rows.length === 1;
}

/** When the user's last reset link was made (to refuse a flood of reset e-mails). */
export async function lastResetLinkAt(sql: Sql, userId: number): Promise<Date | null> {
  const [r] = await sql.query<{ at: Date | string | null }>(
    `SELECT max(created_at) AS at FROM console_links WHERE user_id = $1 AND kind = 'reset'`,
    [userId],
  );
  return date(r?.at ?? null);
}

// ---------------------------------------------------------------------------------------------
// Sign-in failures (per e-mail and per client address), shared by every instance

/**
 * Counts one attempt for `key` before the password is checked, in one statement (atomic: parallel
 * attempts each see their own count): a new window when the last one is older than `windowMs` (and
 * no lock is on) or its lock has ended; the attempt past `max` in a window locks the key for
 * `lockMs`. Returns the lock, if any: then the attempt is refused unchecked.
 */
export async function countAttempt(
  sql: Sql,
  key: string,
  now: Date,
  limits: { windowMs: number; max: number; lockMs: number },
): Promise<{ attempts: number; lockedUntil: Date | null }> {
  const expired = `((f.locked_until IS NULL AND f.window_start <= $2::timestamptz - make_interval(secs => $3::float8 / 1000))
    OR (f.locked_until IS NOT NULL AND f.locked_until <= $2::timestamptz))`;
  const count = `CASE WHEN ${expired} THEN 1 ELSE f.failures + 1 END`;
  const lock = '$2::timestamptz + make_interval(secs => $5::float8 / 1000)';
  const [r] = await sql.query<{ failures: number; locked_until: Date | string | null }>(
    `INSERT INTO console_signin_failures AS f (key, failures, window_start, locked_until)
     VALUES ($1, 1, $2, CASE WHEN 1 > $4::int THEN ${lock} END)
     ON CONFLICT (key) DO UPDATE SET
       failures = ${count},
       window_start = CASE WHEN ${expired} THEN $2::timestamptz ELSE f.window_start END,
       locked_until = CASE
         WHEN NOT ${expired} AND f.locked_until IS NOT NULL THEN f.locked_until
         WHEN ${count} > $4::int THEN ${lock}
         ELSE NULL END
     RETURNING failures, locked_until`,
    [key, now, limits.windowMs, limits.max, limits.lockMs],
  );
  return { attempts: Number(r!.failures), lockedUntil: date(r!.locked_until) };
}

/** Takes back one counted attempt (it succeeded), unless the key is locked; a counter at 0 is removed. */
export async function refundAttempt(sql: Sql, key: string): Promise<void> {
  await sql.query(
    'UPDATE console_signin_failures SET failures = greatest(failures - 1, 0) WHERE key = $1 AND locked_until IS NULL',
    [key],
  );
  await sql.query(
    'DELETE FROM console_signin_failures WHERE key = $1 AND failures = 0 AND locked_until IS NULL',
    [key],
  );
}

export async function clearFailures(sql: Sql, key: string): Promise<void> {
  await sql.query('DELETE FROM console_signin_failures WHERE key = $1', [key]);
}

// ---------------------------------------------------------------------------------------------
// The organisation's audit log (table admin_audit, written with admin/audit.ts's insertAudit)

/** An entry of the organisation's own log: the admin API's view without the organisation. */
export type OrgAuditEntry = Omit<AuditView, 'orgGuid'>;

/** Newest first (by id); `before`: only entries older than this id (the cursor). */
export async function listOrgAudit(
  sql: Sql,
  orgGuid: string,
  before: number | null,
  limit: number,
): Promise<OrgAuditEntry[]> {
  const rows = await sql.query<AuditRow>(
    `SELECT ${AUDIT_COLUMNS}
     FROM admin_audit
     WHERE lower(org_guid) = lower($1) AND ($2::bigint IS NULL OR id < $2)
     ORDER BY lower(org_guid), id DESC
     LIMIT $3`,
    [orgGuid, before, limit],
  );
  return rows.map((r) => {
    const { orgGuid: _, ...entry } = auditViewOf(r);
    return entry;
  });
}

/** Failure counters whose window and lock have both ended (a missing row means the same). */
export async function purgeSigninFailures(sql: Sql, now: Date, windowMs: number): Promise<number> {
  const rows = await sql.query(
    `DELETE FROM console_signin_failures
     WHERE window_start <= $1::timestamptz - make_interval(secs => $2::float8 / 1000)
       AND (locked_until IS NULL OR locked_until <= $1)
     RETURNING key`,
    [now, windowMs],
  );
  return rows.length;
}

/** One-time links expired (or used) before `before`. */
export async function purgeLinks(sql: Sql, before: Date): Promise<number> {
  const rows = await sql.query(
    'DELETE FROM console_links WHERE expires_at <= $1 OR used_at <= $1 RETURNING id',
    [before],
  );
  return rows.length;
}
