import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import { scheduleRequest, scheduleResponse } from '@kupah/contracts';
import { authenticate } from '../auth/middleware.ts';
import type { AppEnv } from '../http/env.ts';
import { ERROR_RESPONSES, jsonBody, jsonOk, validBody } from '../http/openapi.ts';
import type { TokenBuckets } from '../http/rate-limit.ts';
import { requestHash } from '../http/request-hash.ts';
import { schedulePayment } from './schedule-service.ts';

export function scheduleRoutes(buckets: TokenBuckets) {
  const route = createRoute({
    method: 'post',
    path: '/v1/External/SchedulePayment',
    tags: ['Schedules'],
    summary: 'Set up a recurring or future-dated schedule',
    description:
      'Schedule (2.3 → 2.4). Accepts Authorization: <SOURCE_GUID> or APIKey. amount is the total; missing amounts ' +
      'are derived (total = firstPaymentAmount + amountPerPayment × (totalPaymentsCount − 1)), inconsistent ones ' +
      'are 400. A start date of today (organisation time zone) charges the first payment at once; a later one ' +
      'charges nothing now and verifies the payment method. A failed first payment answers paymentStatus Failed.',
    security: [{ SourceGuid: [] }, { ApiKey: [] }],
    middleware: [authenticate({ source: true, apiKey: true }, buckets)] as const,
    request: jsonBody(scheduleRequest, 'Schedule (2.3)'),
    responses: { ...jsonOk(scheduleResponse, 'Schedule result (2.4)'), ...ERROR_RESPONSES },
  });
  return new OpenAPIHono<AppEnv>().openapi(route, async (c) => {
    const body = await schedulePayment(
      c.var.deps,
      c.var.caller,
      validBody(c.req, scheduleRequest),
      requestHash(await c.req.json(), c.var.deps.requestHashKey),
    );
    return c.json(body, 200);
  });
}
