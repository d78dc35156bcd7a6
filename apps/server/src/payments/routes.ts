import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import { chargeRequest, chargeResponse, voidRequest, voidResponse } from '@kupah/contracts';
import { authenticate } from '../auth/middleware.ts';
import type { AppEnv } from '../http/env.ts';
import { ERROR_RESPONSES, jsonBody, jsonOk, validBody } from '../http/openapi.ts';
import type { TokenBuckets } from '../http/rate-limit.ts';
import { requestHash } from '../http/request-hash.ts';
import { charge, voidPayment } from './payment-service.ts';

export function paymentRoutes(buckets: TokenBuckets) {
  const chargeRoute = createRoute({
    method: 'post',
    path: '/v1/External/Charge',
    tags: ['Payments'],
    summary: 'Charge a one-time payment',
    description:
      'Charges a card, ACH account or charity card (2.1 → 2.2). Declined and failed payments also answer 200 with ' +
      'paymentStatus Declined or Error. Reusing uniqueTransactionId with the same body replays the first answer; ' +
      'with another body it is 409 DUPLICATE_TRANSACTION. Accepts orgGuid for orgGUID, CA for CAD, ' +
      '"Credit Card" for Credit_Card, and v1 or V1 in the path.',
    security: [{ SourceGuid: [] }],
    middleware: [authenticate({ source: true, apiKey: false }, buckets)] as const,
    request: jsonBody(chargeRequest, 'Payment (2.1)'),
    responses: { ...jsonOk(chargeResponse, 'Payment result (2.2)'), ...ERROR_RESPONSES },
  });
  const voidRoute = createRoute({
    method: 'post',
    path: '/v1/External/VoidPayment',
    tags: ['Payments'],
    summary: 'Void a successful payment',
    description:
      'Not shown in the interface; defined by the product decisions. Only a Success payment of the same org can be ' +
      'voided; voiding a voided payment answers the same again. Sends the void webhook (6.3).',
    security: [{ SourceGuid: [] }, { ApiKey: [] }],
    middleware: [authenticate({ source: true, apiKey: true }, buckets)] as const,
    request: jsonBody(voidRequest, 'Receipt number to void'),
    responses: { ...jsonOk(voidResponse, 'Voided'), ...ERROR_RESPONSES },
  });
  return new OpenAPIHono<AppEnv>()
    .openapi(chargeRoute, async (c) => {
      const body = await charge(
        c.var.deps,
        c.var.caller,
        validBody(c.req, chargeRequest),
        requestHash(await c.req.json(), c.var.deps.requestHashKey),
      );
      return c.json(body, 200);
    })
    .openapi(voidRoute, async (c) =>
      c.json(await voidPayment(c.var.deps, c.var.caller, validBody(c.req, voidRequest)), 200),
    );
}
