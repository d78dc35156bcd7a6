/**
 * The operator's side of console users, on the admin API (`/admin/orgs/:org/users…`, behind the
 * admin guard: token, lockout, audit log), used by `npm run admin -- user create|list|disable`.
 * Without a password, `create` answers a one-time set-up link (and e-mails it when SMTP is set).
 */
import { zValidator } from '@hono/zod-validator';
import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../http/env.ts';
import { fromZod } from '../http/errors.ts';
import { CONSOLE_ROLES } from './env.ts';
import { PASSWORD_MAX } from './password.ts';
import { createUser, type LinkMailer, orgIdOf, patchUser, userIdByEmail, usersOf } from './users-service.ts';

export interface ConsoleLinkOptions {
  /** The public base URL links are made on (PUBLIC_URL); default http://localhost. */
  publicUrl?: string | undefined;
  mailer?: LinkMailer | undefined;
}

const json = <T extends z.ZodType>(schema: T) =>
  zValidator('json', schema, (result) => {
    if (!result.success) throw fromZod(result.error as unknown as z.ZodError);
  });

const email = z
  .string()
  .trim()
  .max(320)
  .pipe(z.email({ error: 'must be an e-mail address' }));

/** Mounted at `/orgs/:org/users` inside the admin routes. */
export function adminUserRoutes(opts: ConsoleLinkOptions = {}) {
  const base = (opts.publicUrl ?? 'http://localhost').replace(/\/+$/, '');
  return new Hono<AppEnv>()
    .get('/', async (c) => {
      const { db } = c.var.deps;
      return c.json({ users: await usersOf(db, await orgIdOf(db, c.req.param('org')!)) });
    })
    .post(
      '/',
      json(
        z
          .object({
            email,
            role: z.enum(CONSOLE_ROLES),
            name: z.string().trim().min(1).max(200).optional(),
            password: z
              .string()
              .min(1)
              .max(PASSWORD_MAX * 4)
              .optional(),
          })
          .strict(),
      ),
      async (c) => {
        const orgId = await orgIdOf(c.var.deps.db, c.req.param('org')!);
        return c.json(await createUser(c.var.deps, orgId, c.req.valid('json'), base, opts.mailer), 201);
      },
    )
    .post('/disable', json(z.object({ email }).strict()), async (c) => {
      const { db } = c.var.deps;
      const orgId = await orgIdOf(db, c.req.param('org')!);
      const userId = await userIdByEmail(db, orgId, c.req.valid('json').email);
      return c.json(await patchUser(c.var.deps, orgId, userId, { disabled: true }));
    });
}
