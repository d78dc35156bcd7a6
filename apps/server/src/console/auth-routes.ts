/**
 * The console API's sign-in and people routes (docs/console-api.md "Sign-in and people").
 * `publicAuthRoutes`: reachable without a session (sign-in, one-time links, reset request);
 * `authRoutes`: behind `consoleSession` (session, sign-out, password, users, audit).
 */
import { zValidator } from '@hono/zod-validator';
import { ERROR_CODES } from '@kupah/contracts';
import type { Context } from 'hono';
import { Hono } from 'hono';
import { z } from 'zod';
import { remoteAddress } from '../admin/guard.ts';
import { ApiError, fromZod } from '../http/errors.ts';
import { userActor } from './audit-trail.ts';
import { CONSOLE_ROLES } from './env.ts';
import { PASSWORD_MAX } from './password.ts';
import { requireRole } from './roles.ts';
import { clearedSessionCookie, type SessionEnv, sessionCookie, sessionToken } from './session.ts';
import {
  acceptLink,
  type Client,
  changePassword,
  createUser,
  describeLink,
  endAllSessions,
  endSession,
  type LinkMailer,
  lockedOut,
  type NewSession,
  orgAudit,
  patchUser,
  requestPasswordReset,
  resetLinkFor,
  signIn,
  usersOf,
  viewOf,
} from './users-service.ts';

export interface ConsoleAuthOptions {
  /** Whether the cookie is `Secure` for this request (session.ts `secureCookieFor`). */
  secureCookie: (c: Context) => boolean;
  /** Behind a reverse proxy: the client's address is the last X-Forwarded-For entry. */
  trustProxy: boolean;
  /**
   * The server's public base URL (PUBLIC_URL). E-mailed links are made on it only: without it no
   * link is e-mailed (a link made on the request's Host could point anywhere). A link shown to a
   * signed-in owner is made on it, or else on the request's origin.
   */
  publicUrl?: string | undefined;
  /** E-mails invitation and reset links (SMTP configured, and PUBLIC_URL set); else links are only shown. */
  mailer?: LinkMailer | undefined;
}

const valid = <P extends 'json' | 'query', T extends z.ZodType>(part: P, schema: T) =>
  zValidator(part, schema, (result) => {
    if (!result.success) throw fromZod(result.error as unknown as z.ZodError);
  });

const email = z.string().trim().min(3).max(320);
const emailAddress = email.pipe(z.email({ error: 'must be an e-mail address' }));
const password = z
  .string()
  .min(1)
  .max(PASSWORD_MAX * 4);
const role = z.enum(CONSOLE_ROLES);
const personName = z.string().trim().min(1).max(200);

const client = (c: Context, trustProxy: boolean): Client => ({
  ip: remoteAddress(c, trustProxy),
  userAgent: c.req.header('user-agent') ?? null,
});

/** The base of a link shown to a signed-in owner (not e-mailed unless PUBLIC_URL is set). */
const shownBase = (c: Context, opts: ConsoleAuthOptions): string =>
  opts.publicUrl ?? new URL(c.req.url).origin;

/** Links are e-mailed only when made on PUBLIC_URL, never on the request's Host. */
const mailerOf = (opts: ConsoleAuthOptions): LinkMailer | undefined =>
  opts.publicUrl ? opts.mailer : undefined;

/** The e-mail as named in the audit log of a failed sign-in (only when it looks like one). */
const triedAs = (e: string) =>
  /^[^\s@]{1,64}@[^\s@]{1,200}$/.test(e) ? ` (sign-in as ${e.toLowerCase()})` : '';

function signedIn(c: Context<SessionEnv>, session: NewSession, opts: ConsoleAuthOptions) {
  c.set('consoleAudit', { actor: userActor(session.user), orgGuid: session.user.orgGuid });
  c.header('Set-Cookie', sessionCookie(session.token, opts.secureCookie(c)));
  return c.json({ user: viewOf(session.user), csrfToken: session.csrfToken });
}

export function publicAuthRoutes(opts: ConsoleAuthOptions) {
  return new Hono<SessionEnv>()
    .post('/session', valid('json', z.object({ email, password })), async (c) => {
      const input = c.req.valid('json');
      const result = await signIn(
        c.var.deps,
        { ...input, previousToken: sessionToken(c) },
        client(c, opts.trustProxy),
      );
      if (result.ok) return signedIn(c, result.session, opts);
      c.set('consoleAudit', {
        actor: `unauthenticated${triedAs(input.email)}`,
        orgGuid: result.user?.orgGuid ?? null,
      });
      // A cookie the browser brought is not kept past a failed sign-in either.
      if (sessionToken(c) !== undefined) c.header('Set-Cookie', clearedSessionCookie(opts.secureCookie(c)));
      if (result.reason === 'locked') throw lockedOut(result.retryAfterSeconds, 'failed sign-ins');
      throw new ApiError(401, ERROR_CODES.INVALID_CREDENTIALS, 'Wrong e-mail address or password');
    })
    .get('/links/:token', async (c) => c.json(await describeLink(c.var.deps, c.req.param('token'))))
    .post('/links/:token', valid('json', z.object({ password, name: personName.optional() })), async (c) => {
      const { session } = await acceptLink(
        c.var.deps,
        c.req.param('token'),
        c.req.valid('json'),
        client(c, opts.trustProxy),
      );
      return signedIn(c, session, opts);
    })
    .post('/password-reset', valid('json', z.object({ email })), async (c) => {
      const user = await requestPasswordReset(
        c.var.deps,
        c.req.valid('json').email,
        opts.publicUrl,
        mailerOf(opts),
      );
      if (user)
        c.set('consoleAudit', {
          actor: `unauthenticated (password reset for ${user.email})`,
          orgGuid: user.orgGuid,
        });
      return c.json({ accepted: true }, 202);
    });
}

const userIdParam = (raw: string): number => (/^\d{1,15}$/.test(raw) ? Number(raw) : 0);

export function authRoutes(opts: ConsoleAuthOptions) {
  return new Hono<SessionEnv>()
    .get('/session', (c) => c.json({ user: viewOf(c.var.consoleUser), csrfToken: c.var.consoleCsrf }))
    .delete('/session', async (c) => {
      await endSession(c.var.deps.db, c.var.consoleUser.sessionId);
      c.header('Set-Cookie', clearedSessionCookie(opts.secureCookie(c)));
      return c.json({ signedOut: true });
    })
    .post('/session/sign-out-everywhere', async (c) => {
      const ended = await endAllSessions(c.var.deps.db, c.var.consoleUser.userId);
      c.header('Set-Cookie', clearedSessionCookie(opts.secureCookie(c)));
      return c.json({ signedOut: true, sessionsEnded: ended });
    })
    .post(
      '/password',
      valid('json', z.object({ currentPassword: password, newPassword: password })),
      async (c) => {
        const { currentPassword, newPassword } = c.req.valid('json');
        await changePassword(c.var.deps, c.var.consoleUser, currentPassword, newPassword);
        return c.json({ changed: true });
      },
    )
    .get('/users', requireRole('owner'), async (c) =>
      c.json({ users: await usersOf(c.var.deps.db, c.var.consoleUser.orgId) }),
    )
    .post(
      '/users',
      requireRole('owner'),
      valid('json', z.object({ email: emailAddress, role, name: personName.optional() })),
      async (c) => {
        const created = await createUser(
          c.var.deps,
          c.var.consoleUser.orgId,
          c.req.valid('json'),
          shownBase(c, opts),
          mailerOf(opts),
        );
        return c.json(created, 201);
      },
    )
    .patch(
      '/users/:userId',
      requireRole('owner'),
      valid(
        'json',
        z
          .object({ role: role.optional(), disabled: z.boolean().optional() })
          .refine((b) => b.role !== undefined || b.disabled !== undefined, 'give role or disabled'),
      ),
      async (c) =>
        c.json(
          await patchUser(
            c.var.deps,
            c.var.consoleUser.orgId,
            userIdParam(c.req.param('userId')),
            c.req.valid('json'),
          ),
        ),
    )
    .post('/users/:userId/reset', requireRole('owner'), async (c) =>
      c.json(
        await resetLinkFor(
          c.var.deps,
          c.var.consoleUser.orgId,
          userIdParam(c.req.param('userId')),
          shownBase(c, opts),
          mailerOf(opts),
        ),
      ),
    )
    .get(
      '/audit',
      requireRole('manager'),
      valid(
        'query',
        z.object({
          cursor: z
            .string()
            .regex(/^\d{1,15}$/, 'must be a cursor from the previous page')
            .optional(),
          limit: z.coerce.number().int().min(1).max(200).default(50),
        }),
      ),
      async (c) => {
        const { cursor, limit } = c.req.valid('query');
        const entries = await orgAudit(
          c.var.deps.db,
          c.var.consoleUser.orgGuid,
          cursor === undefined ? null : Number(cursor),
          limit,
        );
        const last = entries.at(-1);
        return c.json({ entries, nextCursor: entries.length === limit && last ? String(last.id) : null });
      },
    );
}
