import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import {
  chargeRequest,
  chargeResponse,
  refundRequest,
  refundResponse,
  voidRequest,
  voidResponse,
} from '@kupah/contracts';
import { fingerprintsOf } from '../abuse/fingerprint.ts';
import { settleBlock } from '../abuse/limits.ts';
import { authenticate } from '../auth/middleware.ts';
import type { AppEnv } from '../http/env.ts';
import { ERROR_RESPONSES, jsonBody, jsonOk, validBody } from '../http/openapi.ts';
import type { TokenBuckets } from '../http/rate-limit.ts';
import { commandHash } from '../http/request-hash.ts';
import { charge, voidPayment } from './payment-service.ts';
import { refundByApi } from './refund-service.ts';

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
      '"Credit Card" for Credit_Card, and v1 or V1 in the path. Card testing is refused before the gateway with ' +
      '429 and Retry-After: TOO_MANY_DECLINES once a credential has too many declines (for a cool-off), ' +
      'CARD_TESTING_SUSPECTED once one card was tried or declined too often in the organisation.',
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
      'voided; voiding a voided payment answers the same again. Sends the void webhook (6.3). An API key may void ' +
      'any payment of its organisation; a source GUID (or device credential) only the payments made through it ' +
      '(403 FORBIDDEN otherwise).',
    security: [{ SourceGuid: [] }, { ApiKey: [] }],
    middleware: [authenticate({ source: true, apiKey: true }, buckets)] as const,
    request: jsonBody(voidRequest, 'Receipt number to void'),
    responses: { ...jsonOk(voidResponse, 'Voided'), ...ERROR_RESPONSES },
  });
  const refundRoute = createRoute({
    method: 'post',
    path: '/v1/External/RefundPayment',
    tags: ['Payments'],
    summary: 'Refund a settled payment, in full or in part',
    description:
      'Extension. Returns money of a Success (or PartiallyRefunded) payment through the gateway that charged it: ' +
      '`amount` (major units) or, absent, everything that remains. The payment becomes PartiallyRefunded, then ' +
      'Refunded once all of it is returned; the void webhook (6.3) follows with that status and the amounts. ' +
      'API key only. uniqueTransactionId identifies the refund as it does a Charge: the same request again replays ' +
      'its answer and refunds nothing more. A refund the gateway refuses answers 200 with refundStatus Failed (the ' +
      'payment is unchanged); one whose answer was lost answers refundStatus Pending with REFUND_PENDING (send the ' +
      'same request later). 409 PAYMENT_NOT_REFUNDABLE for a voided, declined, failed or pending payment, ' +
      'REFUND_EXCEEDS_REMAINING for more than remains, REFUND_NOT_SUPPORTED for a method the gateway cannot ' +
      'refund (charity cards). Refunds are never turned into voids: before settlement, void the payment ' +
      '(VoidPayment); a gateway that refuses to refund an unsettled charge answers Failed with its code.',
    security: [{ ApiKey: [] }],
    middleware: [authenticate({ source: false, apiKey: true }, buckets)] as const,
    request: jsonBody(refundRequest, 'The payment, the amount (optional) and the reason of the refund'),
    responses: { ...jsonOk(refundResponse, 'Refund result'), ...ERROR_RESPONSES },
  });
  return new OpenAPIHono<AppEnv>()
    .openapi(chargeRoute, async (c) => {
      const command = validBody(c.req, chargeRequest);
      const body = await charge(
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
    .openapi(voidRoute, async (c) =>
      c.json(await voidPayment(c.var.deps, c.var.caller, validBody(c.req, voidRequest)), 200),
    )
    .openapi(refundRoute, async (c) => {
      const command = validBody(c.req, refundRequest);
      const hash = commandHash(command, c.var.deps.requestHashKey, fingerprintsOf(c.var.deps));
      return c.json(await refundByApi(c.var.deps, c.var.caller, command, hash), 200);
    });
}
