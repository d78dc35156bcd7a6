/**
 * The rules of console users: sign-in with lockout, sessions and their limits, password changes,
 * one-time links (invitations and resets), and the owner's management of the organisation's users.
 * HTTP lives in auth-routes.ts and session.ts; SQL in users-repo.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ERROR_CODES } from '@kupah/contracts';
import type { Db, Sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError, notFound, validationError } from '../http/errors.ts';
import { findOrgByGuid } from '../orgs/repo.ts';
import type { ConsoleRole, ConsoleUser } from './env.ts';
import { hashPassword, needsRehash, passwordProblem, verifyPassword } from './password.ts';
import {
  clearFailures,
  countOtherOwners,
  deleteSession,
  deleteUserSessions,
  findLiveLink,
  findUser,
  findUserByEmail,
  insertLink,
  insertSession,
  insertUser,
  type LinkKind,
  lastResetLinkAt,
  listOrgAudit,
  listUsers,
  loadSession,
  lockedUntil,
  markSignedIn,
  type OrgAuditEntry,
  purgeLinks,
  purgeSessions,
  purgeSigninFailures,
  recordFailure,
  setPasswordHash,
  touchSession,
  type UserRow,
  updateUser,
  useLink,
} from './users-repo.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export const SESSION_LIMITS = {
  /** A session ends after this long without a request. */
  idleMs: 12 * HOUR,
  /** And this long after sign-in, whatever happens. */
  absoluteMs: 7 * 24 * HOUR,
  /** last_seen_at is written at most this often (not on every request). */
  touchEveryMs: MINUTE,
};

export const LINK_LIFETIME: Record<LinkKind, number> = {
  invitation: 7 * 24 * HOUR,
  reset: HOUR,
};

/** Failed sign-ins: per e-mail address (whether or not it has an account), and per client address. */
export const LOCKOUT = {
  email: { max: 5, windowMs: 15 * MINUTE, lockMs: 15 * MINUTE },
  address: { max: 20, windowMs: 15 * MINUTE, lockMs: 15 * MINUTE },
};

/** A reset e-mail is sent at most once in this time per user (POST /password-reset). */
const RESET_MAIL_EVERY_MS = 5 * MINUTE;

/** A random 32-byte token (cookie, link) and the id it is stored under: its SHA-256, hex. */
export function newToken(): { token: string; id: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, id: tokenId(token) };
}

export const tokenId = (token: string): string => createHash('sha256').update(token).digest('hex');

/** The shape of a token this server makes (anything else is not looked up). */
export const isToken = (s: string | undefined): s is string => !!s && /^[\w-]{43}$/.test(s);

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

/** What the console shows of a user. */
export interface UserView {
  userId: number;
  email: string;
  name: string | null;
  role: ConsoleRole;
  orgGuid: string;
  orgName: string;
}

/** A user as the owner's list shows them. */
export interface UserListItem extends UserView {
  disabled: boolean;
  /** An invitation not yet accepted: no password set. */
  invited: boolean;
  lastSignInAt: string | null;
  createdAt: string;
}

export function viewOf(u: UserRow | ConsoleUser): UserView {
  return {
    userId: u.userId,
    email: u.email,
    name: u.name,
    role: u.role,
    orgGuid: u.orgGuid,
    orgName: u.orgName,
  };
}

function listItem(u: UserRow): UserListItem {
  return {
    ...viewOf(u),
    disabled: u.disabledAt !== null,
    invited: u.passwordHash === null,
    lastSignInAt: u.lastSignInAt?.toISOString() ?? null,
    createdAt: u.createdAt.toISOString(),
  };
}

function consoleUserOf(u: UserRow, sessionId: string): ConsoleUser {
  return {
    userId: u.userId,
    email: u.email,
    name: u.name,
    role: u.role,
    orgId: u.orgId,
    orgGuid: u.orgGuid,
    orgName: u.orgName,
    sessionId,
  };
}

// ---------------------------------------------------------------------------------------------
// Sessions

export interface NewSession {
  /** The cookie's value (only the browser keeps it; the database keeps its hash). */
  token: string;
  csrfToken: string;
  user: ConsoleUser;
}

export interface Client {
  ip: string | null;
  userAgent: string | null;
}

async function startSession(sql: Sql, u: UserRow, now: Date, client: Client): Promise<NewSession> {
  const { token, id } = newToken();
  const csrfToken = randomBytes(32).toString('base64url');
  await insertSession(sql, {
    id,
    userId: u.userId,
    csrfToken,
    now,
    expiresAt: new Date(now.getTime() + SESSION_LIMITS.absoluteMs),
    ip: client.ip,
    userAgent: client.userAgent,
  });
  await markSignedIn(sql, u.userId, now);
  return { token, csrfToken, user: consoleUserOf(u, id) };
}

/**
 * The signed-in user of a cookie's token, or null: no such session, the user disabled, the
 * session idle too long or past its absolute limit (such a session is deleted).
 */
export async function resumeSession(
  deps: Pick<Deps, 'db' | 'now'>,
  token: string | undefined,
): Promise<{ user: ConsoleUser; csrfToken: string } | null> {
  if (!isToken(token)) return null;
  const id = tokenId(token);
  const s = await loadSession(deps.db, id);
  if (!s) return null;
  const now = deps.now().getTime();
  const ended =
    s.user.disabledAt !== null ||
    s.expiresAt.getTime() <= now ||
    s.lastSeenAt.getTime() <= now - SESSION_LIMITS.idleMs;
  if (ended) {
    await deleteSession(deps.db, id);
    return null;
  }
  if (now - s.lastSeenAt.getTime() >= SESSION_LIMITS.touchEveryMs) {
    await touchSession(deps.db, id, new Date(now));
  }
  return { user: consoleUserOf(s.user, id), csrfToken: s.csrfToken };
}

/** Whose session a cookie's token is (no limits checked, nothing changed): for the audit log. */
export async function sessionOwner(db: Sql, token: string | undefined): Promise<UserRow | null> {
  if (!isToken(token)) return null;
  return (await loadSession(db, tokenId(token)))?.user ?? null;
}

export async function endSession(db: Sql, sessionId: string): Promise<void> {
  await deleteSession(db, sessionId);
}

/** Ends every session of the user (sign-out everywhere). */
export async function endAllSessions(db: Sql, userId: number): Promise<number> {
  return deleteUserSessions(db, userId, null);
}

// ---------------------------------------------------------------------------------------------
// Sign-in

export type SignInResult =
  | { ok: true; session: NewSession }
  | { ok: false; reason: 'invalid'; user: UserRow | null }
  | { ok: false; reason: 'locked'; user: UserRow | null; retryAfterSeconds: number };

const emailKey = (email: string) => `email:${normaliseEmail(email)}`;
const addressKey = (ip: string | null) => `addr:${ip ?? 'unknown'}`;

/**
 * Checks the e-mail and password. A wrong e-mail and a wrong password answer alike, in about the
 * same time (a dummy hash is verified for an unknown e-mail); 5 failures for one e-mail in 15
 * minutes lock it for 15 minutes (whether or not it has an account), 20 from one address lock
 * the address. A locked e-mail or address is refused even with the right password.
 * `previousToken`: the cookie the browser sent, if any; its session ends (a new id is always issued).
 */
export async function signIn(
  deps: Pick<Deps, 'db' | 'now' | 'logger'>,
  input: { email: string; password: string; previousToken?: string | undefined },
  client: Client,
): Promise<SignInResult> {
  const { db } = deps;
  const now = deps.now();
  const keys = [emailKey(input.email), addressKey(client.ip)];
  const user = await findUserByEmail(db, normaliseEmail(input.email));
  const locked = await lockedUntil(db, keys, now);
  if (locked) {
    return {
      ok: false,
      reason: 'locked',
      user,
      retryAfterSeconds: Math.max(1, Math.ceil((locked.getTime() - now.getTime()) / 1000)),
    };
  }
  const usable = user !== null && user.disabledAt === null && user.passwordHash !== null;
  const matches = await verifyPassword(input.password, usable ? user.passwordHash : null);
  if (!usable || !matches) {
    const byEmail = await recordFailure(db, keys[0]!, now, LOCKOUT.email);
    const byAddress = await recordFailure(db, keys[1]!, now, LOCKOUT.address);
    if (byEmail.lockedUntil || byAddress.lockedUntil) {
      deps.logger.warn(
        {
          emailLocked: byEmail.lockedUntil !== null,
          addressLocked: byAddress.lockedUntil !== null,
          ip: client.ip,
        },
        'console: sign-in locked out after repeated failures',
      );
    }
    return { ok: false, reason: 'invalid', user };
  }
  if (isToken(input.previousToken)) await deleteSession(db, tokenId(input.previousToken));
  await clearFailures(db, keys[0]!);
  if (needsRehash(user.passwordHash!)) {
    await setPasswordHash(db, user.userId, await hashPassword(input.password), now);
  }
  return { ok: true, session: await startSession(db, user, now, client) };
}

// ---------------------------------------------------------------------------------------------
// Passwords and one-time links

function checkPassword(password: string, email: string, field: string): void {
  const problem = passwordProblem(password, email);
  if (problem) throw validationError([{ field, message: problem }]);
}

/** Changes the password; every other session of the user ends. */
export async function changePassword(
  deps: Pick<Deps, 'db' | 'now'>,
  user: ConsoleUser,
  currentPassword: string,
  newPassword: string,
): Promise<void> {
  const row = await findUser(deps.db, user.orgId, user.userId);
  if (!row || !(await verifyPassword(currentPassword, row.passwordHash))) {
    throw new ApiError(403, ERROR_CODES.INVALID_CREDENTIALS, 'The current password is wrong');
  }
  checkPassword(newPassword, row.email, 'newPassword');
  const hash = await hashPassword(newPassword);
  await deps.db.transaction(async (tx) => {
    await setPasswordHash(tx, user.userId, hash, deps.now());
    await deleteUserSessions(tx, user.userId, user.sessionId);
  });
}

/** `<base>/console/#/link/<token>`. */
export const linkUrl = (base: string, token: string): string =>
  `${base.replace(/\/+$/, '')}/console/#/link/${token}`;

/** A new one-time link for the user (earlier unused links stop working); returns the token. */
async function makeLink(sql: Sql, userId: number, kind: LinkKind, now: Date): Promise<string> {
  const { token, id } = newToken();
  await insertLink(sql, {
    id,
    userId,
    kind,
    now,
    expiresAt: new Date(now.getTime() + LINK_LIFETIME[kind]),
  });
  return token;
}

export interface LinkInfo {
  kind: LinkKind;
  email: string;
  orgName: string;
}

/** What a live link is for; 404 when unknown, used, expired, or its user disabled. */
export async function describeLink(deps: Pick<Deps, 'db' | 'now'>, token: string): Promise<LinkInfo> {
  const link = isToken(token) ? await findLiveLink(deps.db, tokenId(token), deps.now()) : null;
  if (!link || link.user.disabledAt !== null) throw notFound('This link');
  return { kind: link.kind, email: link.user.email, orgName: link.user.orgName };
}

/**
 * Sets the password through a live link (once: a second use is 404), ends the user's other
 * sessions, clears the e-mail's failed sign-ins, and signs in.
 */
export async function acceptLink(
  deps: Pick<Deps, 'db' | 'now'>,
  token: string,
  input: { password: string; name?: string | undefined },
  client: Client,
): Promise<{ kind: LinkKind; session: NewSession }> {
  const now = deps.now();
  const link = isToken(token) ? await findLiveLink(deps.db, tokenId(token), now) : null;
  if (!link || link.user.disabledAt !== null) throw notFound('This link');
  checkPassword(input.password, link.user.email, 'password');
  const hash = await hashPassword(input.password);
  return deps.db.transaction(async (tx) => {
    if (!(await useLink(tx, tokenId(token), now))) throw notFound('This link');
    await setPasswordHash(tx, link.user.userId, hash, now);
    if (input.name !== undefined) await updateUser(tx, link.user.userId, { name: input.name }, now);
    await deleteUserSessions(tx, link.user.userId, null);
    await clearFailures(tx, emailKey(link.user.email));
    const user = (await findUser(tx, link.user.orgId, link.user.userId))!;
    return { kind: link.kind, session: await startSession(tx, user, now, client) };
  });
}

/** Sends a link by e-mail (set when SMTP is configured). */
export type LinkMailer = (m: {
  to: string;
  kind: LinkKind;
  link: string;
  orgName: string;
  name: string | null;
}) => Promise<void>;

/**
 * POST /password-reset: when the e-mail has an enabled account and a mailer is configured, a
 * reset link is e-mailed (at most one every 5 minutes). The caller always answers 202.
 */
export async function requestPasswordReset(
  deps: Pick<Deps, 'db' | 'now' | 'logger'>,
  email: string,
  base: string,
  mailer: LinkMailer | undefined,
): Promise<UserRow | null> {
  const user = await findUserByEmail(deps.db, normaliseEmail(email));
  if (!user || user.disabledAt !== null || !mailer) return user;
  const now = deps.now();
  const last = await lastResetLinkAt(deps.db, user.userId);
  if (last && now.getTime() - last.getTime() < RESET_MAIL_EVERY_MS) return user;
  const token = await makeLink(deps.db, user.userId, 'reset', now);
  // Not awaited: the answer does not wait for SMTP (its time would tell that the account exists).
  void mailer({
    to: user.email,
    kind: 'reset',
    link: linkUrl(base, token),
    orgName: user.orgName,
    name: user.name,
  }).catch((err) =>
    deps.logger.error({ err: String(err), userId: user.userId }, 'console: could not e-mail a reset link'),
  );
  return user;
}

// ---------------------------------------------------------------------------------------------
// The owner's management of users (also the operator's, through the admin API)

export interface CreatedUser {
  user: UserListItem;
  /** The one-time invitation link (absent when a password was given). */
  link?: string;
}

/**
 * A new user of `orgId`. Without a password: an invitation link (7 days), e-mailed when a mailer
 * is given. 409 EMAIL_TAKEN when any organisation has a user with this e-mail.
 */
export async function createUser(
  deps: Pick<Deps, 'db' | 'now' | 'logger'>,
  orgId: number,
  input: {
    email: string;
    role: ConsoleRole;
    name?: string | null | undefined;
    password?: string | undefined;
  },
  base: string,
  mailer?: LinkMailer,
): Promise<CreatedUser> {
  const email = input.email.trim();
  if (input.password !== undefined) checkPassword(input.password, email, 'password');
  const hash = input.password !== undefined ? await hashPassword(input.password) : null;
  const now = deps.now();
  const created = await deps.db.transaction(async (tx) => {
    const userId = await insertUser(
      tx,
      { orgId, email, name: input.name ?? null, role: input.role, passwordHash: hash },
      now,
    );
    if (userId === null) {
      throw new ApiError(
        409,
        ERROR_CODES.EMAIL_TAKEN,
        'A console user with this e-mail address already exists',
      );
    }
    const token = hash === null ? await makeLink(tx, userId, 'invitation', now) : null;
    return { user: (await findUser(tx, orgId, userId))!, token };
  });
  const out: CreatedUser = { user: listItem(created.user) };
  if (created.token) {
    out.link = linkUrl(base, created.token);
    if (mailer) {
      try {
        await mailer({
          to: created.user.email,
          kind: 'invitation',
          link: out.link,
          orgName: created.user.orgName,
          name: created.user.name,
        });
      } catch (err) {
        deps.logger.error({ err: String(err) }, 'console: could not e-mail an invitation');
      }
    }
  }
  return out;
}

export async function usersOf(db: Sql, orgId: number): Promise<UserListItem[]> {
  return (await listUsers(db, orgId)).map(listItem);
}

async function requireUser(db: Sql, orgId: number, userId: number): Promise<UserRow> {
  const u = Number.isSafeInteger(userId) && userId > 0 ? await findUser(db, orgId, userId) : null;
  if (!u) throw notFound(`User ${userId}`);
  return u;
}

/**
 * Changes a user's role or disables/enables them; disabling ends their sessions. The last enabled
 * owner can be neither demoted nor disabled (409 INVALID_STATE).
 */
export async function patchUser(
  deps: Pick<Deps, 'db' | 'now'>,
  orgId: number,
  userId: number,
  change: { role?: ConsoleRole | undefined; disabled?: boolean | undefined },
): Promise<UserListItem> {
  return deps.db.transaction(async (tx) => {
    const u = await requireUser(tx, orgId, userId);
    const losesOwner =
      u.role === 'owner' &&
      u.disabledAt === null &&
      ((change.role !== undefined && change.role !== 'owner') || change.disabled === true);
    if (losesOwner && (await countOtherOwners(tx, orgId, userId)) === 0) {
      throw new ApiError(
        409,
        ERROR_CODES.INVALID_STATE,
        'This is the last owner of the organisation: make another user owner first',
      );
    }
    await updateUser(tx, userId, change, deps.now());
    if (change.disabled === true) await deleteUserSessions(tx, userId, null);
    return listItem((await findUser(tx, orgId, userId))!);
  });
}

/** A password-reset link for a user of the organisation (1 hour); e-mailed when a mailer is given. */
export async function resetLinkFor(
  deps: Pick<Deps, 'db' | 'now' | 'logger'>,
  orgId: number,
  userId: number,
  base: string,
  mailer?: LinkMailer,
): Promise<{ link: string }> {
  const u = await requireUser(deps.db, orgId, userId);
  if (u.disabledAt !== null) {
    throw new ApiError(409, ERROR_CODES.INVALID_STATE, 'This user is disabled: enable them first');
  }
  const kind: LinkKind = u.passwordHash === null ? 'invitation' : 'reset';
  const token = await makeLink(deps.db, u.userId, kind, deps.now());
  const link = linkUrl(base, token);
  if (mailer) {
    await mailer({ to: u.email, kind, link, orgName: u.orgName, name: u.name }).catch((err) =>
      deps.logger.error({ err: String(err) }, 'console: could not e-mail a reset link'),
    );
  }
  return { link };
}

// ---------------------------------------------------------------------------------------------
// The operator's side (admin API): users by organisation GUID and e-mail

export async function orgIdOf(db: Db, orgGuid: string): Promise<number> {
  const org = await findOrgByGuid(db, orgGuid);
  if (!org) throw notFound(`Organisation ${orgGuid}`);
  return org.id;
}

export async function userIdByEmail(db: Sql, orgId: number, email: string): Promise<number> {
  const u = await findUserByEmail(db, normaliseEmail(email));
  if (!u || u.orgId !== orgId) throw notFound(`User ${email}`);
  return u.userId;
}

/** The organisation's audit log (operator's and users' actions), newest first. */
export async function orgAudit(
  db: Sql,
  orgGuid: string,
  before: number | null,
  limit: number,
): Promise<OrgAuditEntry[]> {
  return listOrgAudit(db, orgGuid, before, limit);
}

/** Housekeeping: ended sessions, spent failure counters, links expired or used over 30 days ago. */
export async function purgeConsoleRecords(db: Sql, now: Date): Promise<number> {
  const window = Math.max(LOCKOUT.email.windowMs, LOCKOUT.address.windowMs);
  return (
    (await purgeSessions(db, now, SESSION_LIMITS.idleMs)) +
    (await purgeSigninFailures(db, now, window)) +
    (await purgeLinks(db, new Date(now.getTime() - 30 * 24 * HOUR)))
  );
}
