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
  countAttempt,
  countOtherOwners,
  deleteSession,
  deleteUserSessions,
  expireUserLinks,
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
  lockOwners,
  markSignedIn,
  type OrgAuditEntry,
  purgeLinks,
  purgeSessions,
  purgeSigninFailures,
  refundAttempt,
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

/** How e-mail addresses are stored, looked up and counted: NFC, trimmed, lower case (JavaScript's). */
export const normaliseEmail = (email: string): string => email.normalize('NFC').trim().toLowerCase();

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

/**
 * The lockout key of a sign-in: the account's id when the e-mail has one (however the address is
 * spelled), otherwise the normalised address (an unknown e-mail is counted and locked all the same).
 */
const accountKey = (user: Pick<UserRow, 'userId'> | null, email: string) =>
  user ? `user:${user.userId}` : `email:${normaliseEmail(email)}`;

/** Expands an IPv6 address to its 8 groups (null when it is not one). */
function ipv6Groups(ip: string): number[] | null {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!bare.includes(':')) return null;
  let text = bare;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail].map((g) =>
    /^[0-9a-f]{1,4}$/i.test(g) ? Number.parseInt(g, 16) : Number.NaN,
  );
  return groups.some(Number.isNaN) ? null : groups;
}

/**
 * The lockout key of a client address: an IPv4 address as it is; an IPv6 address by its /64 (one
 * client usually holds a whole /64); an IPv4-mapped IPv6 address as its IPv4 address.
 */
export function addressKey(ip: string | null): string {
  if (!ip) return 'addr:unknown';
  const g = ipv6Groups(ip);
  if (!g) return `addr:${ip}`;
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    return `addr:${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  }
  return `addr:${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`;
}

const retryAfter = (until: Date, now: Date) =>
  Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));

/**
 * Checks the e-mail and password. A wrong e-mail and a wrong password answer alike, in about the
 * same time (a dummy hash is verified for an unknown e-mail). Every attempt is counted before the
 * password is checked (atomically, so a burst of parallel guesses cannot all be checked): a 6th
 * attempt for one account (or unknown e-mail) within 15 minutes is refused and locks it for 15
 * minutes; a 21st from one address (an IPv6 /64) locks the address. A success takes its attempts
 * back (the account's counter is cleared). A locked account or address is refused even with the
 * right password. `previousToken`: the cookie the browser sent, if any; its session ends (a new id
 * is always issued).
 */
export async function signIn(
  deps: Pick<Deps, 'db' | 'now' | 'logger'>,
  input: { email: string; password: string; previousToken?: string | undefined },
  client: Client,
): Promise<SignInResult> {
  const { db } = deps;
  const now = deps.now();
  const user = await findUserByEmail(db, normaliseEmail(input.email));
  const keys = [accountKey(user, input.email), addressKey(client.ip)] as const;
  const byAccount = await countAttempt(db, keys[0], now, LOCKOUT.email);
  const byAddress = await countAttempt(db, keys[1], now, LOCKOUT.address);
  const locked = [byAccount.lockedUntil, byAddress.lockedUntil]
    .filter((d): d is Date => d !== null && d > now)
    .sort((a, b) => b.getTime() - a.getTime())[0];
  if (locked) {
    if (byAccount.attempts === LOCKOUT.email.max + 1 || byAddress.attempts === LOCKOUT.address.max + 1) {
      deps.logger.warn(
        {
          emailLocked: byAccount.lockedUntil !== null,
          addressLocked: byAddress.lockedUntil !== null,
          ip: client.ip,
        },
        'console: sign-in locked out after repeated failures',
      );
    }
    return { ok: false, reason: 'locked', user, retryAfterSeconds: retryAfter(locked, now) };
  }
  const usable = user !== null && user.disabledAt === null && user.passwordHash !== null;
  const matches = await verifyPassword(input.password, usable ? user.passwordHash : null);
  if (!usable || !matches) return { ok: false, reason: 'invalid', user };
  if (isToken(input.previousToken)) await deleteSession(db, tokenId(input.previousToken));
  await clearFailures(db, keys[0]);
  await refundAttempt(db, keys[1]);
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

/** 429 LOCKED_OUT with Retry-After. */
export function lockedOut(retryAfterSeconds: number, what: string): ApiError {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return new ApiError(
    429,
    ERROR_CODES.LOCKED_OUT,
    `Too many ${what}: try again in ${minutes} minute${minutes === 1 ? '' : 's'}, or reset your password`,
    undefined,
    { 'Retry-After': String(retryAfterSeconds) },
  );
}

/**
 * Changes the password; every other session of the user ends and their unused one-time links stop
 * working. Guesses of the current password count under the sign-in lockout of the account (429).
 */
export async function changePassword(
  deps: Pick<Deps, 'db' | 'now'>,
  user: ConsoleUser,
  currentPassword: string,
  newPassword: string,
): Promise<void> {
  const now = deps.now();
  const key = accountKey(user, user.email);
  const attempt = await countAttempt(deps.db, key, now, LOCKOUT.email);
  if (attempt.lockedUntil && attempt.lockedUntil > now) {
    throw lockedOut(retryAfter(attempt.lockedUntil, now), 'wrong passwords');
  }
  const row = await findUser(deps.db, user.orgId, user.userId);
  if (!row || !(await verifyPassword(currentPassword, row.passwordHash))) {
    throw new ApiError(403, ERROR_CODES.INVALID_CREDENTIALS, 'The current password is wrong');
  }
  await clearFailures(deps.db, key);
  checkPassword(newPassword, row.email, 'newPassword');
  const hash = await hashPassword(newPassword);
  await deps.db.transaction(async (tx) => {
    await setPasswordHash(tx, user.userId, hash, deps.now());
    await deleteUserSessions(tx, user.userId, user.sessionId);
    await expireUserLinks(tx, user.userId, deps.now());
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
    await clearFailures(tx, accountKey(link.user, link.user.email));
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
 * POST /password-reset: when the e-mail has an enabled account, a mailer is configured and the
 * public base URL is known (PUBLIC_URL: never the request's Host, which the caller chooses), a
 * reset link is e-mailed (at most one every 5 minutes). The caller always answers 202.
 */
export async function requestPasswordReset(
  deps: Pick<Deps, 'db' | 'now' | 'logger'>,
  email: string,
  publicBase: string | undefined,
  mailer: LinkMailer | undefined,
): Promise<UserRow | null> {
  const user = await findUserByEmail(deps.db, normaliseEmail(email));
  if (!user || user.disabledAt !== null || !mailer || !publicBase) return user;
  const now = deps.now();
  const last = await lastResetLinkAt(deps.db, user.userId);
  if (last && now.getTime() - last.getTime() < RESET_MAIL_EVERY_MS) return user;
  const token = await makeLink(deps.db, user.userId, 'reset', now);
  // Not awaited: the answer does not wait for SMTP (its time would tell that the account exists).
  void mailer({
    to: user.email,
    kind: 'reset',
    link: linkUrl(publicBase, token),
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
  const email = normaliseEmail(input.email);
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
    // Owners' rows locked first: a concurrent demotion of the other owner waits, then is seen.
    await lockOwners(tx, orgId);
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
    if (change.disabled === true) {
      await deleteUserSessions(tx, userId, null);
      await expireUserLinks(tx, userId, deps.now());
    }
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
  // (A counter whose lock has ended is removed once its window has passed too.)
  return (
    (await purgeSessions(db, now, SESSION_LIMITS.idleMs)) +
    (await purgeSigninFailures(db, now, window)) +
    (await purgeLinks(db, new Date(now.getTime() - 30 * 24 * HOUR)))
  );
}
