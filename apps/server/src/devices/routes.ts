/**
 * Device sync over HTTP: pairing (no credential: the one-time pairing code is the credential),
 * then push and pull with the device's source GUID in `Authorization`.
 */

import { getConnInfo } from '@hono/node-server/conninfo';
import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import {
  deviceReceiptSendRequest,
  ERROR_CODES,
  MAX_PUSH_OPERATIONS,
  pairRequest,
  pairResponse,
  pullQuery,
  pullResponse,
  pushRequest,
  pushResponse,
  receiptSendResponse,
  shiftCloseRequest,
  shiftCloseResponse,
} from '@kupah/contracts';
import type { Context, MiddlewareHandler } from 'hono';
import { sourceGuidOf } from '../auth/middleware.ts';
import type { AppEnv } from '../http/env.ts';
import { ApiError } from '../http/errors.ts';
import { ERROR_RESPONSES, jsonBody, jsonOk, validBody } from '../http/openapi.ts';
import { type TokenBuckets, takeOrRefuse } from '../http/rate-limit.ts';
import { deviceSendReceipt } from '../receipts/receipt-service.ts';
import { closeShift, type DeviceContext, deviceOf, pairDevice, pull, push } from './device-service.ts';

type DeviceEnv = AppEnv & { Variables: { device: DeviceContext } };

/** Pairing attempts per client address: codes are short, guessing must stay hopeless. */
const PAIRING_LIMIT = { perSecond: 0.2, burst: 10 };

/** A push takes one rate-limit token per operation (at least one; a push over the maximum is a 400, no op runs). */
async function pushCost(c: Context): Promise<number> {
  try {
    const body = (await c.req.json()) as { operations?: unknown };
    const n = Array.isArray(body?.operations) ? body.operations.length : 1;
    return n > MAX_PUSH_OPERATIONS ? 1 : Math.max(1, n);
  } catch {
    return 1; // not JSON: validation answers it
  }
}

function authenticateDevice(
  buckets: TokenBuckets,
  cost: (c: Context) => Promise<number> = async () => 1,
): MiddlewareHandler<DeviceEnv> {
  return async (c, next) => {
    const raw = sourceGuidOf(c.req.header('authorization'));
    if (!raw) {
      throw new ApiError(
        401,
        ERROR_CODES.UNAUTHORIZED,
        'Missing credential: send Authorization: <DEVICE_CREDENTIAL>',
      );
    }
    const ctx = await deviceOf(c.var.deps.db, raw);
    await takeOrRefuse(
      buckets,
      `device:${ctx.device.id}`,
      ctx.caller.org.settings.rateLimit,
      'Too many requests from this device; slow down',
      c.var.deps.metrics.rateLimited,
      await cost(c),
    );
    c.set('caller', ctx.caller);
    c.set('device', ctx);
    await next();
  };
}

/**
 * The client's address. X-Forwarded-For is believed only from a proxy on this machine (the peer
 * is loopback, or there is no socket: tests calling app.request()); a client on the network
 * cannot pick its own bucket by sending the header.
 */
function clientAddress(c: Context): string {
  let peer: string | undefined;
  try {
    peer = getConnInfo(c).remote.address;
  } catch {
    peer = undefined;
  }
  const local = !peer || peer === '127.0.0.1' || peer === '::1' || peer === '::ffff:127.0.0.1';
  const forwarded = c.req.header('x-forwarded-for')?.split(',')[0]?.trim();
  return (local && forwarded) || peer || 'unknown';
}

function limitPairing(buckets: TokenBuckets): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const who = clientAddress(c);
    await takeOrRefuse(
      buckets,
      `pair:${who}`,
      PAIRING_LIMIT,
      'Too many pairing attempts; wait and try again',
      c.var.deps.metrics.rateLimited,
    );
    await next();
  };
}

export function deviceRoutes(buckets: TokenBuckets) {
  const pairRoute = createRoute({
    method: 'post',
    path: '/v1/Device/Pair',
    tags: ['Device sync'],
    summary: 'Pair a terminal with a one-time pairing code',
    description:
      'Redeems a pairing code made with `npm run admin -- device create` (valid 15 minutes, once). Answers the ' +
      "device's id and credential (shown once), the organisation's settings, the envelope key to seal card and " +
      "bank data with (signed), the organisation's public signing key (the terminal pins it and adopts only " +
      'envelope keys it signed), and the first page of reference data.',
    middleware: [limitPairing(buckets)] as const,
    request: jsonBody(pairRequest, 'Pairing code'),
    responses: { ...jsonOk(pairResponse, 'Paired'), ...ERROR_RESPONSES },
  });
  const pushRoute = createRoute({
    method: 'post',
    path: '/v1/Device/Sync/Push',
    tags: ['Device sync'],
    summary: "Forward operations from a device's outbox",
    description:
      'Up to 100 operations (charges, schedules, donor saves, voids), each answered on its own: Success, ' +
      'Declined or Error, with retryable telling whether to send it again. Each opId is an idempotency key: a ' +
      'replayed operation gets the same answer and charges nothing twice. 403 DEVICE_REVOKED when revoked.',
    security: [{ SourceGuid: [] }],
    middleware: [authenticateDevice(buckets, pushCost)] as const,
    request: jsonBody(pushRequest, 'Operations'),
    responses: { ...jsonOk(pushResponse, 'One result per operation, in order'), ...ERROR_RESPONSES },
  });
  const pullRoute = createRoute({
    method: 'get',
    path: '/v1/Device/Sync/Pull',
    tags: ['Device sync'],
    summary: 'Reference data changed since a cursor',
    description:
      'Campaigns, reasons, collectors and donors changed since `cursor` (all when omitted), with the settings and ' +
      'the current envelope key. Pull again while `more` is true.',
    security: [{ SourceGuid: [] }],
    middleware: [authenticateDevice(buckets)] as const,
    request: { query: pullQuery },
    responses: { ...jsonOk(pullResponse, 'Changes'), ...ERROR_RESPONSES },
  });
  const shiftRoute = createRoute({
    method: 'post',
    path: '/v1/Device/Shift/Close',
    tags: ['Device sync'],
    summary: "Record a device's end of shift",
    description:
      "The device's totals since its last close (succeeded, voided, declined by method and currency; what is " +
      "still queued), recorded once per closeId. Answers the server's own totals of the device's payments taken " +
      'in the shift (by the time the device took them), as forwarded so far, so the two can be compared.',
    security: [{ SourceGuid: [] }],
    middleware: [authenticateDevice(buckets)] as const,
    request: jsonBody(shiftCloseRequest, 'The shift and its totals on the device'),
    responses: { ...jsonOk(shiftCloseResponse, 'Recorded, with the server totals'), ...ERROR_RESPONSES },
  });
  const receiptRoute = createRoute({
    method: 'post',
    path: '/v1/Device/Receipt/Send',
    tags: ['Device sync'],
    summary: 'E-mail the receipt of a payment this device took',
    description:
      "Queues the receipt of a payment taken on this device to the address the donor gave (the donor's record is " +
      'not changed). A payment of another device, or one without a receipt (declined, failed, pending), is a 404. ' +
      'While a copy to the same address still waits, sending again answers that one. 409 INVALID_STATE when ' +
      'the organisation has receipts off (settings.receipts.enabled false).',
    security: [{ SourceGuid: [] }],
    middleware: [authenticateDevice(buckets)] as const,
    request: jsonBody(deviceReceiptSendRequest, '{ receiptNum, email, language? }'),
    responses: { ...jsonOk(receiptSendResponse, 'Queued'), ...ERROR_RESPONSES },
  });
  return new OpenAPIHono<DeviceEnv>()
    .openapi(receiptRoute, async (c) =>
      c.json(
        await deviceSendReceipt(c.var.deps, c.var.device.caller, validBody(c.req, deviceReceiptSendRequest)),
        200,
      ),
    )
    .openapi(shiftRoute, async (c) =>
      c.json(await closeShift(c.var.deps, c.var.device, validBody(c.req, shiftCloseRequest)), 200),
    )
    .openapi(pairRoute, async (c) => c.json(await pairDevice(c.var.deps, validBody(c.req, pairRequest)), 200))
    .openapi(pushRoute, async (c) =>
      c.json(await push(c.var.deps, c.var.device, validBody(c.req, pushRequest)), 200),
    )
    .openapi(pullRoute, async (c) => {
      const q = c.req.valid('query');
      return c.json(await pull(c.var.deps, c.var.device, q.cursor, q.limit, q), 200);
    });
}
