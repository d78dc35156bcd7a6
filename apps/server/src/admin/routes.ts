/**
 * The admin API (used by the admin CLI): `Authorization: Bearer <ADMIN_TOKEN>`, served on the admin
 * listener (ADMIN_HOST:ADMIN_PORT, loopback by default) only. Not part of the External API, and not
 * in its OpenAPI document.
 */

import { zValidator } from '@hono/zod-validator';
import {
  CURRENCIES,
  ERROR_CODES,
  RECEIPT_DELIVERY_STATUSES,
  SCHEDULE_HANDLING_MODES,
  str,
} from '@kupah/contracts';
import { Hono } from 'hono';
import { z } from 'zod';
import { adminUserRoutes, type ConsoleLinkOptions } from '../console/admin-user-routes.ts';
import { createDevice, listOrgDevices, revokeOrgDevice } from '../devices/device-service.ts';
import { listKeys, retireKey, rotateKey } from '../devices/envelope-keys.ts';
import { GATEWAY_PROVIDERS } from '../gateway/registry.ts';
import type { AppEnv } from '../http/env.ts';
import { ApiError, fromZod, validationError } from '../http/errors.ts';
import {
  BRAND_COLOR,
  BRAND_LOGO,
  CHARITY_PROVIDER_IDS,
  isValidTimeZone,
  RECEIPT_STATEMENT,
  RECEIPT_TEXT,
} from '../orgs/settings.ts';
import { annualStatements, orgReceiptDeliveries } from '../receipts/receipt-service.ts';
import { insecureWebhookUrl } from '../webhooks/sender.ts';
import {
  adminEvents,
  createApiKey,
  createOrg,
  createSource,
  deliveries,
  deliveryAttempts,
  describeOrg,
  type GatewayChange,
  pendingPayments,
  replay,
  revoke,
  rewrapSecrets,
  rotate,
  secretsStatus,
  setOrgGateway,
  updateSettings,
} from './admin-service.ts';
import { listAudit } from './audit.ts';
import { type AdminGuardOptions, adminGuard } from './guard.ts';

/** Validate a part of the request with `schema`; a failure is the usual 400 naming every field (the console uses it too). */
export const valid = <P extends 'json' | 'query', T extends z.ZodType>(part: P, schema: T) =>
  zValidator(part, schema, (result) => {
    if (!result.success) throw fromZod(result.error as unknown as z.ZodError);
  });
const json = <T extends z.ZodType>(schema: T) => valid('json', schema);

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
    terminal: z
      .object({
        presetsMinor: z.array(z.number().int().positive()).max(12).optional(),
        coverFeePercent: z.number().min(0).max(10).optional(),
        /** Names of the charity-card providers on the terminals; a null name removes it. */
        providerNames: z
          .partialRecord(z.enum(CHARITY_PROVIDER_IDS), z.string().trim().min(1).max(64).nullable())
          .optional(),
        /** The kiosk's colour and logo; null removes one. */
        brand: z
          .object({ color: BRAND_COLOR.nullable().optional(), logo: BRAND_LOGO.nullable().optional() })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
    /** Tax receipts: the legal details, on/off, the tax statement per language; null removes one. */
    receipts: z
      .object({
        enabled: z.boolean().nullable().optional(),
        legalName: RECEIPT_TEXT.nullable().optional(),
        address: RECEIPT_STATEMENT.nullable().optional(),
        taxId: RECEIPT_TEXT.pipe(z.string().max(64)).nullable().optional(),
        statementEn: RECEIPT_STATEMENT.nullable().optional(),
        statementHe: RECEIPT_STATEMENT.nullable().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** A gateway's API key as the admin sends it (validation messages never repeat the value). */
export const gatewayKey = z
  .string()
  .min(8, 'must be at least 8 characters')
  .max(512, 'must be at most 512 characters')
  .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

/** `PUT /admin/orgs/:org/gateway`: a provider with its key (and endpoint), or `none` to remove it. */
export const gatewayChange = z
  .object({
    provider: z.string().trim().min(1).max(64),
    key: gatewayKey.optional(),
    /** The provider's endpoint; absent or null: its production endpoint. */
    url: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
      .max(2000)
      .nullish(),
  })
  .strict()
  .superRefine((b, ctx) => {
    const names = ['none', ...Object.keys(GATEWAY_PROVIDERS)];
    if (!names.includes(b.provider)) {
      ctx.addIssue({ code: 'custom', path: ['provider'], message: `must be one of ${names.join(', ')}` });
    } else if (b.provider === 'none') {
      for (const k of ['key', 'url'] as const)
        if (b[k] !== undefined && b[k] !== null)
          ctx.addIssue({ code: 'custom', path: [k], message: 'is not taken with provider none' });
    } else if (b.key === undefined) {
      ctx.addIssue({ code: 'custom', path: ['key'], message: `is required with provider ${b.provider}` });
    }
  })
  .transform(
    (b): GatewayChange =>
      b.provider === 'none'
        ? { provider: 'none' }
        : { provider: b.provider, key: b.key!, url: b.url ?? null },
  );

function deliveryId(raw: string): number {
  if (!/^\d{1,15}$/.test(raw)) throw new ApiError(404, ERROR_CODES.NOT_FOUND, `No delivery ${raw}`);
  return Number(raw);
}

/** Each webhook URL of a settings change that may not be used, as a 400 naming its field. */
export function refuseInsecureWebhooks(
  urls: Record<string, string | null | undefined>,
  allowPrivate: boolean,
): void {
  const fields = Object.entries(urls).flatMap(([field, url]) => {
    const why = url ? insecureWebhookUrl(url, allowPrivate) : null;
    return why ? [{ field, message: why }] : [];
  });
  if (fields.length > 0) throw validationError(fields);
}

/** The admin routes behind `adminGuard` (token, lockout, audit log). Served on the admin listener only. */
export function adminRoutes(
  guard: AdminGuardOptions & { allowInsecureWebhooks?: boolean; consoleLinks?: ConsoleLinkOptions },
) {
  return (
    new Hono<AppEnv>()
      .use(adminGuard(guard))
      .get(
        '/audit',
        valid(
          'query',
          z.object({
            org: z.string().trim().min(1).max(256).optional(),
            since: z.iso.datetime({ offset: true }).optional(),
            limit: z.coerce.number().int().min(1).max(1000).default(100),
          }),
        ),
        async (c) => c.json(await listAudit(c.var.deps.db, c.req.valid('query'))),
      )
      .post(
        '/orgs',
        json(
          z.object({
            name: str(256).min(1),
            currencies: z.array(z.enum(CURRENCIES)).min(1).optional(),
          }),
        ),
        async (c) => {
          const { name, currencies } = c.req.valid('json');
          return c.json(await createOrg(c.var.deps.db, name, currencies), 201);
        },
      )
      .get('/orgs/:org', async (c) => c.json(await describeOrg(c.var.deps.db, c.req.param('org'))))
      // Console users (console/admin-user-routes.ts): list, create (a set-up link), disable.
      .route('/orgs/:org/users', adminUserRoutes(guard.consoleLinks))
      .patch('/orgs/:org/settings', json(settingsPatch), async (c) => {
        const p = c.req.valid('json');
        const { currencies, paymentWebhook, scheduleWebhook, voidWebhook, ...settings } = p;
        // Refused when configured, not only when sending: https:// unless WEBHOOK_ALLOW_PRIVATE=1.
        refuseInsecureWebhooks(
          { paymentWebhook, scheduleWebhook, voidWebhook },
          guard.allowInsecureWebhooks ?? false,
        );
        const webhooks = Object.fromEntries(
          Object.entries({ payment: paymentWebhook, schedule: scheduleWebhook, void: voidWebhook }).filter(
            ([, v]) => v !== undefined,
          ),
        );
        return c.json(
          await updateSettings(c.var.deps.db, c.req.param('org'), { currencies, webhooks, settings }),
        );
      })
      .put('/orgs/:org/gateway', json(gatewayChange), async (c) => {
        const { db, gateways, now } = c.var.deps;
        return c.json(await setOrgGateway(db, gateways, c.req.param('org'), c.req.valid('json'), now()));
      })
      .get('/secrets', async (c) => c.json(await secretsStatus(c.var.deps.db, c.var.deps.gateways)))
      .post('/secrets/rewrap', async (c) => c.json(await rewrapSecrets(c.var.deps.db, c.var.deps.gateways)))
      .post(
        '/orgs/:org/api-keys',
        json(z.object({ sandbox: z.boolean().default(false), name: str(256).nullish() })),
        async (c) => {
          const { sandbox, name } = c.req.valid('json');
          return c.json(await createApiKey(c.var.deps.db, c.req.param('org'), sandbox, name ?? null), 201);
        },
      )
      .post('/orgs/:org/api-keys/revoke', json(z.object({ apiKey: str(256).min(1) })), async (c) =>
        c.json(await revoke(c.var.deps.db, c.req.param('org'), 'apiKey', c.req.valid('json').apiKey)),
      )
      .post(
        '/orgs/:org/sources',
        json(
          z.object({
            name: str(256).min(1),
            kind: z.enum(['device', 'external']),
            sandbox: z.boolean().default(false),
          }),
        ),
        async (c) => {
          const { name, kind, sandbox } = c.req.valid('json');
          return c.json(await createSource(c.var.deps.db, c.req.param('org'), name, kind, sandbox), 201);
        },
      )
      .get(
        '/orgs/:org/deliveries',
        valid(
          'query',
          z.object({
            status: z.enum(['pending', 'delivered', 'dead']).optional(),
            kind: z.enum(['payment', 'schedule', 'void']).optional(),
            since: z.iso.datetime({ offset: true }).optional(),
            limit: z.coerce.number().int().min(1).max(1000).default(100),
          }),
        ),
        async (c) => c.json(await deliveries(c.var.deps.db, c.req.param('org'), c.req.valid('query'))),
      )
      .get('/orgs/:org/deliveries/:id/attempts', async (c) =>
        c.json(await deliveryAttempts(c.var.deps.db, c.req.param('org'), deliveryId(c.req.param('id')))),
      )
      .post('/orgs/:org/deliveries/:id/replay', async (c) =>
        c.json(
          await replay(
            c.var.deps.db,
            c.req.param('org'),
            { deliveryId: deliveryId(c.req.param('id')) },
            c.var.deps.now(),
          ),
        ),
      )
      .post(
        '/orgs/:org/deliveries/replay',
        json(z.object({ failedSince: z.iso.datetime({ offset: true }) })),
        async (c) =>
          c.json(await replay(c.var.deps.db, c.req.param('org'), c.req.valid('json'), c.var.deps.now())),
      )
      .post('/orgs/:org/webhooks/:kind/rotate', async (c) => {
        const kind = z.enum(['payment', 'schedule', 'void']).safeParse(c.req.param('kind'));
        if (!kind.success)
          throw new ApiError(404, ERROR_CODES.NOT_FOUND, 'kind must be payment, schedule or void');
        return c.json(await rotate(c.var.deps.db, c.req.param('org'), kind.data, c.var.deps.now()));
      })
      .get(
        '/orgs/:org/receipts',
        valid(
          'query',
          z.object({
            status: z.enum(RECEIPT_DELIVERY_STATUSES).optional(),
            limit: z.coerce.number().int().min(1).max(500).default(100),
          }),
        ),
        async (c) => c.json(await orgReceiptDeliveries(c.var.deps, c.req.param('org'), c.req.valid('query'))),
      )
      .post(
        '/orgs/:org/receipts/annual',
        json(
          z.object({ year: z.number().int().min(2000).max(2100), send: z.boolean().default(false) }).strict(),
        ),
        async (c) => {
          const { year, send } = c.req.valid('json');
          return c.json(await annualStatements(c.var.deps, c.req.param('org'), year, { send }));
        },
      )
      .get('/orgs/:org/events', async (c) => c.json(await adminEvents(c.var.deps.db, c.req.param('org'))))
      .post('/orgs/:org/sources/revoke', json(z.object({ sourceGuid: str(256).min(1) })), async (c) =>
        c.json(await revoke(c.var.deps.db, c.req.param('org'), 'source', c.req.valid('json').sourceGuid)),
      )
      .post(
        '/orgs/:org/devices',
        json(z.object({ name: str(256).min(1), sandbox: z.boolean().default(false) })),
        async (c) => {
          const { name, sandbox } = c.req.valid('json');
          const { db, now } = c.var.deps;
          return c.json(await createDevice(db, c.req.param('org'), name, sandbox, now()), 201);
        },
      )
      .get('/orgs/:org/payments/pending', async (c) =>
        c.json(await pendingPayments(c.var.deps.db, c.req.param('org'))),
      )
      .get('/orgs/:org/devices', async (c) =>
        c.json(await listOrgDevices(c.var.deps.db, c.req.param('org'), c.var.deps.now())),
      )
      .post('/orgs/:org/devices/:device/revoke', async (c) =>
        c.json(
          await revokeOrgDevice(c.var.deps.db, c.req.param('org'), c.req.param('device'), c.var.deps.now()),
        ),
      )
      .get('/envelope-keys', async (c) => c.json(await listKeys(c.var.deps.db)))
      .post('/envelope-keys/rotate', async (c) =>
        c.json(await rotateKey(c.var.deps.db, c.req.query('org')), 201),
      )
      .post('/envelope-keys/:kid/retire', async (c) =>
        c.json(await retireKey(c.var.deps.db, c.req.param('kid'))),
      )
  );
}
