/**
 * The admin API (used by the admin CLI): `Authorization: Bearer <ADMIN_TOKEN>`. Not part of the
 * External API, and not in its OpenAPI document.
 */
import { timingSafeEqual } from 'node:crypto';
import { zValidator } from '@hono/zod-validator';
import { CURRENCIES, ERROR_CODES, SCHEDULE_HANDLING_MODES } from '@kupah/contracts';
import { Hono } from 'hono';
import { z } from 'zod';
import type { AppEnv } from '../http/env.ts';
import { ApiError, fromZod } from '../http/errors.ts';
import { isValidTimeZone } from '../orgs/settings.ts';
import {
  createApiKey,
  createOrg,
  createSource,
  describeOrg,
  revoke,
  updateSettings,
} from './admin-service.ts';

const json = <T extends z.ZodType>(schema: T) =>
  zValidator('json', schema, (result) => {
    if (!result.success) throw fromZod(result.error as unknown as z.ZodError);
  });

const webhookUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .max(2000)
  .nullable();

export const settingsPatch = z
  .object({
    currencies: z.array(z.enum(CURRENCIES)).min(1).optional(),
    paymentWebhook: webhookUrl.optional(),
    scheduleWebhook: webhookUrl.optional(),
    voidWebhook: webhookUrl.optional(),
    scheduleMode: z.enum(SCHEDULE_HANDLING_MODES).optional(),
    il: z.boolean().optional(),
    timezone: z
      .string()
      .refine(isValidTimeZone, 'must be an IANA time zone such as America/New_York')
      .optional(),
    shabbatShift: z.boolean().optional(),
    webhooksAllSources: z.boolean().optional(),
    rateLimit: z
      .object({
        perSecond: z.number().positive().max(100_000),
        burst: z.number().int().positive().max(1_000_000),
      })
      .optional(),
    offline: z
      .object({
        perPaymentMinor: z.number().int().positive(),
        totalMinor: z.number().int().positive(),
        expiryHours: z.number().positive().max(72),
      })
      .optional(),
  })
  .strict();

function tokenMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header?.replace(/^Bearer\s+/i, '') ?? '');
  const want = Buffer.from(token);
  return given.length === want.length && timingSafeEqual(given, want);
}

export function adminRoutes(adminToken: string) {
  return new Hono<AppEnv>()
    .use(async (c, next) => {
      if (!tokenMatches(c.req.header('authorization'), adminToken)) {
        throw new ApiError(
          401,
          ERROR_CODES.UNAUTHORIZED,
          'Admin API: send Authorization: Bearer <ADMIN_TOKEN>',
        );
      }
      await next();
    })
    .post(
      '/orgs',
      json(
        z.object({
          name: z.string().min(1).max(256),
          currencies: z.array(z.enum(CURRENCIES)).min(1).optional(),
        }),
      ),
      async (c) => {
        const { name, currencies } = c.req.valid('json');
        return c.json(await createOrg(c.var.deps.db, name, currencies), 201);
      },
    )
    .get('/orgs/:org', async (c) => c.json(await describeOrg(c.var.deps.db, c.req.param('org'))))
    .patch('/orgs/:org/settings', json(settingsPatch), async (c) => {
      const p = c.req.valid('json');
      const { currencies, paymentWebhook, scheduleWebhook, voidWebhook, ...settings } = p;
      const webhooks = Object.fromEntries(
        Object.entries({ payment: paymentWebhook, schedule: scheduleWebhook, void: voidWebhook }).filter(
          ([, v]) => v !== undefined,
        ),
      );
      return c.json(
        await updateSettings(c.var.deps.db, c.req.param('org'), { currencies, webhooks, settings }),
      );
    })
    .post(
      '/orgs/:org/api-keys',
      json(z.object({ sandbox: z.boolean().default(false), name: z.string().max(256).nullish() })),
      async (c) => {
        const { sandbox, name } = c.req.valid('json');
        return c.json(await createApiKey(c.var.deps.db, c.req.param('org'), sandbox, name ?? null), 201);
      },
    )
    .post('/orgs/:org/api-keys/revoke', json(z.object({ apiKey: z.string().min(1).max(256) })), async (c) =>
      c.json(await revoke(c.var.deps.db, c.req.param('org'), 'apiKey', c.req.valid('json').apiKey)),
    )
    .post(
      '/orgs/:org/sources',
      json(
        z.object({
          name: z.string().min(1).max(256),
          kind: z.enum(['device', 'external']),
          sandbox: z.boolean().default(false),
        }),
      ),
      async (c) => {
        const { name, kind, sandbox } = c.req.valid('json');
        return c.json(await createSource(c.var.deps.db, c.req.param('org'), name, kind, sandbox), 201);
      },
    )
    .post(
      '/orgs/:org/sources/revoke',
      json(z.object({ sourceGuid: z.string().min(1).max(256) })),
      async (c) =>
        c.json(await revoke(c.var.deps.db, c.req.param('org'), 'source', c.req.valid('json').sourceGuid)),
    );
}
