/**
 * The console's data endpoints (docs/console-api.md, "Data"), relative to `/console/api`. Mounted
 * by `consoleApi()` behind the session, CSRF and audit middleware, which set `consoleUser`: every
 * handler takes the organisation from it, never from the request. Reads need `viewer`, changes
 * `manager`, API keys, sources and the gateway `owner`. Another organisation's ids answer 404.
 */

import {
  CURRENCIES,
  paymentListQuery,
  saveCampaignRequest,
  saveCollectorRequest,
  saveDonorRequest,
  saveReasonRequest,
  shiftListQuery,
  str,
  UNKNOWN_FIELD_MESSAGE,
} from '@kupah/contracts';
import { type Context, Hono } from 'hono';
import { z } from 'zod';
import { gatewayChange, refuseInsecureWebhooks, settingsPatch, valid } from '../admin/routes.ts';
import { csvDownload } from '../http/csv-download.ts';
import { fromZod, notFound, validationError } from '../http/errors.ts';
import type { WebhookKind } from '../orgs/repo.ts';
import {
  attemptsOf,
  type Ctx,
  campaignList,
  changeGateway,
  changeSchedule,
  collectorList,
  consoleOrg,
  consoleSettings,
  deliveryList,
  deviceList,
  donorDetail,
  donorSearch,
  editDevice,
  editDonor,
  exportPayments,
  integrations,
  newApiKey,
  newSource,
  pairNewDevice,
  patchSettings,
  paymentDetail,
  reasonList,
  replayDelivery,
  requirePayment,
  revokeById,
  revokeConsoleDevice,
  rotateWebhook,
  saveConsoleCampaign,
  saveConsoleCollector,
  saveConsoleReason,
  scheduleDetail,
  scheduleList,
  searchPayments,
  setWebhook,
  shiftList,
  voidFromConsole,
} from './console-service.ts';
import { DASHBOARD_RANGES, dashboard } from './dashboard.ts';
import { mergeDonors } from './donor-merge.ts';
import type { ConsoleEnv } from './env.ts';
import { refundFromConsole } from './refund-port.ts';
import { requireRole } from './roles.ts';

export interface ConsoleDataOptions {
  /** WEBHOOK_ALLOW_PRIVATE=1: webhook URLs may be http:// (development); otherwise https:// only. */
  allowInsecureWebhooks?: boolean | undefined;
  /** The server's public base URL (PUBLIC_URL): pairing URLs are made on it; default the request's origin. */
  publicUrl?: string | undefined;
}

type C = Context<ConsoleEnv>;

async function ctx(c: C): Promise<Ctx> {
  const deps = c.var.deps;
  const user = c.var.consoleUser;
  return { deps, user, org: await consoleOrg(deps, user) };
}

const viewer = requireRole('viewer');
const manager = requireRole('manager');
const owner = requireRole('owner');

/** A path number (schedule, campaign, reason, delivery): anything else is not found. */
function pathNumber(raw: string, what: string): number {
  if (!/^\d{1,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw notFound(`${what} ${raw}`);
  return Number(raw);
}

/** A path number where `new` (or 0) creates. */
const numberOrNew = (raw: string, what: string): number => (raw === 'new' ? 0 : pathNumber(raw, what));

const boundedParam = (raw: string, what: string): string => {
  if (raw.length === 0 || raw.length > 64) throw notFound(`${what} ${raw}`);
  return raw;
};

/**
 * A Save* body with the organisation and the record's id taken from the session and the path:
 * the body may not name them (a 400 UNKNOWN_FIELD), the rest is the operation's own validation.
 */
async function saveBody<T extends z.ZodType>(
  c: C,
  schema: T,
  taken: string[],
  inject: Record<string, unknown>,
): Promise<z.output<T>> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch {
    throw validationError([{ field: '(body)', message: 'The body is not valid JSON' }]);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationError([{ field: '(body)', message: 'must be a JSON object' }]);
  }
  const named = taken.filter((k) => Object.hasOwn(body as object, k));
  if (named.length > 0)
    throw validationError(named.map((field) => ({ field, message: UNKNOWN_FIELD_MESSAGE })));
  const parsed = schema.safeParse({ ...(body as object), ...inject });
  if (!parsed.success) throw fromZod(parsed.error);
  return parsed.data;
}

const ORG_FIELDS = ['orgGuid', 'orgGUID'];

const consolePaymentQuery = paymentListQuery
  .omit({ orgGuid: true, orgGUID: true })
  .extend({
    /** Aliases the console's filters use. */
    campaign: paymentListQuery.shape.campaignNumber,
    device: paymentListQuery.shape.deviceId,
  })
  .transform(({ campaign, device, ...q }) => ({
    ...q,
    campaignNumber: q.campaignNumber ?? campaign,
    deviceId: q.deviceId ?? device,
  }));

const WEBHOOK_KINDS = ['payment', 'schedule', 'void'] as const;
function webhookKind(raw: string): WebhookKind {
  const kind = z.enum(WEBHOOK_KINDS).safeParse(raw);
  if (!kind.success) throw notFound(`Webhook kind ${raw} (payment, schedule or void)`);
  return kind.data;
}

/** What a manager may change in the settings: the admin's settings less webhooks (their own endpoints) and the operator's rate limit. */
const consoleSettingsPatch = settingsPatch
  .omit({ paymentWebhook: true, scheduleWebhook: true, voidWebhook: true, rateLimit: true })
  .extend({
    name: str(256).trim().min(1).optional(),
    currencies: z.array(z.enum(CURRENCIES)).min(1).optional(),
  })
  .strict();

const limit = (max: number, dflt: number) => z.coerce.number().int().min(1).max(max).default(dflt);

export function consoleDataRoutes(opts: ConsoleDataOptions = {}) {
  return (
    new Hono<ConsoleEnv>()
      // --- Today -------------------------------------------------------------------------------
      .get(
        '/dashboard',
        viewer,
        valid('query', z.strictObject({ range: z.enum(DASHBOARD_RANGES).default('today') })),
        async (c) => {
          const x = await ctx(c);
          return c.json(await dashboard(x.deps, x.org, c.req.valid('query').range));
        },
      )
      // --- payments ------------------------------------------------------------------------------
      .get('/payments', viewer, valid('query', consolePaymentQuery), async (c) =>
        c.json(await searchPayments(await ctx(c), c.req.valid('query'))),
      )
      .get('/payments.csv', viewer, valid('query', consolePaymentQuery), async (c) => {
        const lines = await exportPayments(await ctx(c), c.req.valid('query'));
        return csvDownload(lines, `payments-${c.var.deps.now().toISOString().slice(0, 10)}.csv`);
      })
      .get('/payments/:receiptNum', viewer, async (c) => {
        const receiptNum = boundedParam(c.req.param('receiptNum'), 'Payment');
        return c.json(await paymentDetail(await ctx(c), receiptNum));
      })
      .post(
        '/payments/:receiptNum/void',
        manager,
        valid('json', z.strictObject({ reason: str(2000).trim().min(1, 'is required') })),
        async (c) => {
          const receiptNum = boundedParam(c.req.param('receiptNum'), 'Payment');
          return c.json(await voidFromConsole(await ctx(c), receiptNum, c.req.valid('json').reason));
        },
      )
      .post(
        '/payments/:receiptNum/refund',
        manager,
        valid(
          'json',
          z.strictObject({
            /** Minor units; absent: everything that remains. */
            amountMinor: z.number().int().positive().max(100_000_000).optional(),
            reason: str(2000).trim().min(1, 'is required'),
            /** One per refund dialog: the same request again replays, never refunds twice. */
            uniqueTransactionId: z.string().regex(/^[\w-]{8,64}$/, 'must be 8 to 64 letters, digits, _ or -'),
          }),
        ),
        async (c) => {
          const receiptNum = boundedParam(c.req.param('receiptNum'), 'Payment');
          const { amountMinor, reason, uniqueTransactionId } = c.req.valid('json');
          const x = await ctx(c);
          // Another organisation's receipt is 404 here, before the refund service is reached.
          const payment = await requirePayment(x, receiptNum);
          return c.json(
            await refundFromConsole(x, payment, {
              amountMinor: amountMinor ?? null,
              reason,
              uniqueTransactionId,
            }),
          );
        },
      )
      // --- schedules -----------------------------------------------------------------------------
      .get(
        '/schedules',
        viewer,
        valid(
          'query',
          z.strictObject({
            status: z.enum(['pending', 'active', 'failed', 'completed', 'cancelled', 'paused']).optional(),
            limit: limit(500, 100),
          }),
        ),
        async (c) => c.json(await scheduleList(await ctx(c), c.req.valid('query'))),
      )
      .get('/schedules/:scheduleNum', viewer, async (c) =>
        c.json(await scheduleDetail(await ctx(c), pathNumber(c.req.param('scheduleNum'), 'Schedule'))),
      )
      .post('/schedules/:scheduleNum/:action{pause|resume|cancel}', manager, async (c) => {
        const action = c.req.param('action') as 'pause' | 'resume' | 'cancel';
        const num = pathNumber(c.req.param('scheduleNum'), 'Schedule');
        return c.json(await changeSchedule(await ctx(c), num, action));
      })
      // --- donors --------------------------------------------------------------------------------
      .get(
        '/donors',
        viewer,
        valid(
          'query',
          z.strictObject({ q: str(100).optional(), cursor: str(200).optional(), limit: limit(200, 50) }),
        ),
        async (c) => c.json(await donorSearch(await ctx(c), c.req.valid('query'))),
      )
      .post(
        '/donors/merge',
        manager,
        valid('json', z.strictObject({ keep: str(32).trim().min(1), merge: str(32).trim().min(1) })),
        async (c) => {
          const { keep, merge } = c.req.valid('json');
          const user = c.var.consoleUser;
          return c.json(await mergeDonors(c.var.deps, user.orgId, user.email, keep, merge));
        },
      )
      .get('/donors/:accountNum', viewer, async (c) =>
        c.json(await donorDetail(await ctx(c), boundedParam(c.req.param('accountNum'), 'Donor'))),
      )
      .put('/donors/:accountNum', manager, async (c) => {
        const accountNum = boundedParam(c.req.param('accountNum'), 'Donor');
        const x = await ctx(c);
        const {
          orgGuid: _o,
          id: _i,
          ...patch
        } = await saveBody(c, saveDonorRequest, [...ORG_FIELDS, 'donorID', 'donorId'], {
          orgGuid: x.org.guid,
          donorID: accountNum,
        });
        return c.json(await editDonor(x, accountNum, patch));
      })
      // --- collectors, campaigns, reasons ----------------------------------------------------------
      .get('/collectors', viewer, async (c) => c.json(await collectorList(await ctx(c))))
      .put('/collectors/:code', manager, async (c) => {
        const code = boundedParam(c.req.param('code'), 'Collector');
        const x = await ctx(c);
        const id = code === 'new' ? '' : code;
        const {
          orgGuid: _o,
          id: _i,
          ...patch
        } = await saveBody(c, saveCollectorRequest, [...ORG_FIELDS, 'collectorID', 'collectorId'], {
          orgGuid: x.org.guid,
          collectorID: id,
        });
        return c.json(await saveConsoleCollector(x, id, patch));
      })
      .get('/campaigns', viewer, async (c) => c.json(await campaignList(await ctx(c))))
      .put('/campaigns/:code', manager, async (c) => {
        const number = numberOrNew(c.req.param('code'), 'Campaign');
        const x = await ctx(c);
        const { orgGuid: _o, ...cmd } = await saveBody(
          c,
          saveCampaignRequest,
          [...ORG_FIELDS, 'campaignNumber'],
          {
            orgGuid: x.org.guid,
            campaignNumber: number,
          },
        );
        return c.json(await saveConsoleCampaign(x, cmd));
      })
      .get('/reasons', viewer, async (c) => c.json(await reasonList(await ctx(c))))
      .put('/reasons/:code', manager, async (c) => {
        const number = numberOrNew(c.req.param('code'), 'Reason');
        const x = await ctx(c);
        const { orgGuid: _o, ...cmd } = await saveBody(
          c,
          saveReasonRequest,
          [...ORG_FIELDS, 'reasonNumber'],
          {
            orgGuid: x.org.guid,
            reasonNumber: number,
          },
        );
        return c.json(await saveConsoleReason(x, cmd));
      })
      // --- devices -------------------------------------------------------------------------------
      .get('/devices', viewer, async (c) => c.json(await deviceList(await ctx(c))))
      .post(
        '/devices',
        manager,
        valid(
          'json',
          z.strictObject({
            name: str(256).trim().min(1),
            location: str(256).trim().nullish(),
            sandbox: z.boolean().default(false),
          }),
        ),
        async (c) => {
          const origin = opts.publicUrl?.replace(/\/+$/, '') ?? new URL(c.req.url).origin;
          return c.json(await pairNewDevice(await ctx(c), origin, c.req.valid('json')), 201);
        },
      )
      .patch(
        '/devices/:deviceId',
        manager,
        valid(
          'json',
          z.strictObject({ name: str(256).trim().min(1).optional(), location: str(256).trim().nullish() }),
        ),
        async (c) => {
          const body = c.req.valid('json');
          const deviceId = boundedParam(c.req.param('deviceId'), 'Device');
          // An empty location removes it.
          const location = body.location === '' ? null : body.location;
          return c.json(await editDevice(await ctx(c), deviceId, { name: body.name, location }));
        },
      )
      .post('/devices/:deviceId/revoke', manager, async (c) =>
        c.json(await revokeConsoleDevice(await ctx(c), boundedParam(c.req.param('deviceId'), 'Device'))),
      )
      .get(
        '/shifts',
        viewer,
        valid('query', shiftListQuery.omit({ orgGuid: true, orgGUID: true })),
        async (c) => c.json(await shiftList(await ctx(c), c.req.valid('query'))),
      )
      // --- integrations --------------------------------------------------------------------------
      .get('/integrations', manager, async (c) => c.json(await integrations(await ctx(c))))
      .post(
        '/api-keys',
        owner,
        valid(
          'json',
          z.strictObject({ name: str(256).trim().min(1).nullish(), sandbox: z.boolean().default(false) }),
        ),
        async (c) => {
          const { name, sandbox } = c.req.valid('json');
          return c.json(await newApiKey(await ctx(c), name ?? null, sandbox), 201);
        },
      )
      .post('/api-keys/:id/revoke', owner, async (c) =>
        c.json(await revokeById(await ctx(c), 'api_keys', pathNumber(c.req.param('id'), 'API key'))),
      )
      .post(
        '/sources',
        owner,
        valid('json', z.strictObject({ name: str(256).trim().min(1), sandbox: z.boolean().default(false) })),
        async (c) => {
          const { name, sandbox } = c.req.valid('json');
          return c.json(await newSource(await ctx(c), name, sandbox), 201);
        },
      )
      .post('/sources/:id/revoke', owner, async (c) =>
        c.json(await revokeById(await ctx(c), 'sources', pathNumber(c.req.param('id'), 'Source'))),
      )
      .put(
        '/webhooks/:kind',
        manager,
        valid('json', z.strictObject({ url: settingsPatch.shape.paymentWebhook.unwrap() })),
        async (c) => {
          const kind = webhookKind(c.req.param('kind'));
          const { url } = c.req.valid('json');
          // https:// only (unless WEBHOOK_ALLOW_PRIVATE=1), checked as the admin API checks it.
          refuseInsecureWebhooks({ url }, opts.allowInsecureWebhooks ?? false);
          return c.json(await setWebhook(await ctx(c), kind, url));
        },
      )
      .post('/webhooks/:kind/rotate', manager, async (c) =>
        c.json(await rotateWebhook(await ctx(c), webhookKind(c.req.param('kind')))),
      )
      .get(
        '/deliveries',
        manager,
        valid(
          'query',
          z.strictObject({
            status: z.enum(['pending', 'delivered', 'dead']).optional(),
            kind: z.enum(WEBHOOK_KINDS).optional(),
            limit: limit(1000, 100),
          }),
        ),
        async (c) => c.json(await deliveryList(await ctx(c), c.req.valid('query'))),
      )
      .get('/deliveries/:id/attempts', manager, async (c) =>
        c.json(await attemptsOf(await ctx(c), pathNumber(c.req.param('id'), 'Delivery'))),
      )
      .post('/deliveries/:id/replay', manager, async (c) =>
        c.json(await replayDelivery(await ctx(c), pathNumber(c.req.param('id'), 'Delivery'))),
      )
      .put('/gateway', owner, valid('json', gatewayChange), async (c) =>
        c.json(await changeGateway(await ctx(c), c.req.valid('json'))),
      )
      // --- settings ------------------------------------------------------------------------------
      .get('/settings', viewer, async (c) => c.json(await consoleSettings(await ctx(c))))
      .patch('/settings', manager, valid('json', consoleSettingsPatch), async (c) => {
        const { name, currencies, ...settings } = c.req.valid('json');
        return c.json(await patchSettings(await ctx(c), { name, currencies, settings }));
      })
  );
}
