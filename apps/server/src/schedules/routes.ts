import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import {
  scheduleActionRequest,
  scheduleListQuery,
  scheduleListResponse,
  schedulePaymentMethodRequest,
  schedulePreviewRequest,
  schedulePreviewResponse,
  scheduleRequest,
  scheduleResponse,
  scheduleSummary,
} from '@kupah/contracts';
import { fingerprintsOf } from '../abuse/fingerprint.ts';
import { settleBlock } from '../abuse/limits.ts';
import { authenticate } from '../auth/middleware.ts';
import type { AppEnv } from '../http/env.ts';
import { ERROR_RESPONSES, jsonBody, jsonOk, validBody } from '../http/openapi.ts';
import type { TokenBuckets } from '../http/rate-limit.ts';
import { commandHash } from '../http/request-hash.ts';
import {
  changeSchedulePaymentMethod,
  changeScheduleState,
  listSchedules,
  previewSchedule,
} from './schedule-management.ts';
import { schedulePayment } from './schedule-service.ts';

const scheduleNumParam = z.object({
  scheduleNum: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER),
});

export function scheduleRoutes(buckets: TokenBuckets) {
  const either = authenticate({ source: true, apiKey: true }, buckets);
  const apiKeyOnly = authenticate({ source: false, apiKey: true }, buckets);
  const route = createRoute({
    method: 'post',
    path: '/v1/External/SchedulePayment',
    tags: ['Schedules'],
    summary: 'Set up a recurring or future-dated schedule',
    description:
      'Schedule (2.3 → 2.4). Accepts Authorization: <SOURCE_GUID> or APIKey. amount is the total; missing amounts ' +
      'are derived (total = firstPaymentAmount + amountPerPayment × (totalPaymentsCount − 1)), inconsistent ones ' +
      'are 400. A start date of today (organisation time zone) charges the first payment at once; a later one ' +
      'charges nothing now and verifies the payment method. A failed first payment answers paymentStatus Failed. ' +
      "The organisation's ScheduleHandlingMode decides who runs the recurrence: Integration (the schedule " +
      'webhook), Internal (this service charges each instalment) or Gateway (the gateway does).',
    security: [{ SourceGuid: [] }, { ApiKey: [] }],
    middleware: [either] as const,
    request: jsonBody(scheduleRequest, 'Schedule (2.3)'),
    responses: { ...jsonOk(scheduleResponse, 'Schedule result (2.4)'), ...ERROR_RESPONSES },
  });
  const preview = createRoute({
    method: 'post',
    path: '/v1/External/SchedulePreview',
    tags: ['Schedules'],
    summary: 'Preview the instalments of a schedule (extension)',
    description:
      'The same body as SchedulePayment; no payment data is needed, and nothing is stored or charged. Answers every ' +
      'instalment with its civil due date (after any Shabbat/Yom Tov move) and Hebrew date.',
    security: [{ SourceGuid: [] }, { ApiKey: [] }],
    middleware: [either] as const,
    request: jsonBody(schedulePreviewRequest, 'Schedule terms'),
    responses: { ...jsonOk(schedulePreviewResponse, 'The instalments'), ...ERROR_RESPONSES },
  });
  const list = createRoute({
    method: 'get',
    path: '/v1/External/Schedules',
    tags: ['Schedules'],
    summary: "List an organisation's or a donor's schedules with their next dates (extension)",
    description:
      'Documented extension. The schedules of the organisation (or of one donor, `donorId`), newest first, ' +
      'optionally of one status, with the next instalment date, the payments charged (the first payment ' +
      'charged at creation included) and missed. Unknown query parameters are a 400 UNKNOWN_FIELD.',
    security: [{ ApiKey: [] }],
    middleware: [apiKeyOnly] as const,
    request: { query: scheduleListQuery },
    responses: { ...jsonOk(scheduleListResponse, 'Schedules, newest first'), ...ERROR_RESPONSES },
  });
  const action = (name: 'Cancel' | 'Pause' | 'Resume', description: string) =>
    createRoute({
      method: 'post',
      path: `/v1/External/Schedules/{scheduleNum}/${name}`,
      tags: ['Schedules'],
      summary: `${name} a schedule (extension)`,
      description,
      security: [{ ApiKey: [] }],
      middleware: [apiKeyOnly] as const,
      request: { params: scheduleNumParam, ...jsonBody(scheduleActionRequest, '{ orgGuid }') },
      responses: { ...jsonOk(scheduleSummary, 'The schedule'), ...ERROR_RESPONSES },
    });
  const card = createRoute({
    method: 'put',
    path: '/v1/External/Schedules/{scheduleNum}/PaymentMethod',
    tags: ['Schedules'],
    summary: 'Change the card or account of a schedule (extension)',
    description:
      'The new payment method is verified with the gateway; the coming instalments are charged to it.',
    security: [{ ApiKey: [] }],
    middleware: [apiKeyOnly] as const,
    request: {
      params: scheduleNumParam,
      ...jsonBody(schedulePaymentMethodRequest, 'The new payment method'),
    },
    responses: { ...jsonOk(scheduleSummary, 'The schedule'), ...ERROR_RESPONSES },
  });
  const app = new OpenAPIHono<AppEnv>()
    .openapi(route, async (c) => {
      const command = validBody(c.req, scheduleRequest);
      const body = await schedulePayment(
        c.var.deps,
        c.var.caller,
        command,
        commandHash(command, c.var.deps.requestHashKey, fingerprintsOf(c.var.deps)),
      ).catch(async (err: unknown) => {
        // A card-testing block: its security event is written before the 429 is answered.
        await settleBlock(err);
        throw err;
      });
      return c.json(body, 200);
    })
    .openapi(preview, async (c) =>
      c.json(previewSchedule(c.var.deps, c.var.caller, validBody(c.req, schedulePreviewRequest)), 200),
    )
    .openapi(list, async (c) =>
      c.json(await listSchedules(c.var.deps, c.var.caller, c.req.valid('query')), 200),
    );
  for (const [name, act, description] of [
    [
      'Cancel',
      'cancel',
      'No instalment is charged after the cancellation commits; pending ones are cancelled.',
    ],
    ['Pause', 'pause', 'No instalment is charged while paused.'],
    ['Resume', 'resume', 'Instalments that fell due while paused are skipped; the next ones are charged.'],
  ] as const) {
    app.openapi(action(name, description), async (c) => {
      const { scheduleNum } = c.req.valid('param');
      const { orgGuid } = validBody(c.req, scheduleActionRequest);
      return c.json(await changeScheduleState(c.var.deps, c.var.caller, orgGuid, scheduleNum, act), 200);
    });
  }
  app.openapi(card, async (c) => {
    const { scheduleNum } = c.req.valid('param');
    return c.json(
      await changeSchedulePaymentMethod(
        c.var.deps,
        c.var.caller,
        scheduleNum,
        validBody(c.req, schedulePaymentMethodRequest),
      ),
      200,
    );
  });
  return app;
}
